/**
 * The turn pipeline end to end, through the synthesized ASL and DynamoDB Local: the sample
 * conversation (what `stepwise run turn-pipeline --input ….jsonl` replays), one execution per
 * turn with the session in SessionsTable, and a turn rejected while another holds the session.
 */

import { DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dynamoSessionStore, newSession } from '../../../lambdas/workflows/turn-pipeline/session.ts';
import { type RunResult, WorkflowSession } from '../../../src/local/sessions/workflow-session.ts';

let session: WorkflowSession;
beforeAll(async () => {
  session = await WorkflowSession.start({ workflow: 'turn-pipeline', historyDir: false, logLevel: 'SILENT' });
}, 120_000);
afterAll(async () => session?.close());

const last = (r: RunResult) =>
  r.steps.at(-1)!.fields as {
    reply: string;
    outcome: string;
    scenario: string | null;
    scenarioStep: string | null;
    turn: number;
    profileSchemaVersion?: number;
  };

describe('turn-pipeline conversations', () => {
  it('replays the sample conversation in one session: each line one execution, state carried in SessionsTable', async () => {
    const results = await session.runFiles(['statemachines/turn-pipeline/conversations/refund-conversation.jsonl']);
    expect(results.map((r) => r.status)).toEqual(Array(6).fill('SUCCEEDED'));
    expect(results.map((r) => [last(r).turn, last(r).outcome, last(r).scenario, last(r).scenarioStep])).toEqual([
      [1, 'answered', 'refund', 'identify_order'],
      [2, 'answered', 'refund', 'confirm_refund'],
      [3, 'answered', 'refund', 'confirm_refund'], // the price tangent stays in refund
      [4, 'clarify-step', 'refund', 'confirm_refund'], // "maybe" at the yes/no step
      [5, 'answered', 'refund', 'submitted'],
      [6, 'answered', 'refund', 'submitted'],
    ]);
    expect(results[1]!.toolCalls.map((c) => c.tool)).toEqual([
      'session_store',
      'similarity',
      'lookup_order',
      'similarity',
      'session_store',
    ]);
    const stored = await dynamoSessionStore(session.dynamo.client, session.tables.SESSIONS_TABLE!).begin(
      'demo-refund-1',
      'probe',
      new Date(),
    );
    expect(stored).toMatchObject({
      version: 6,
      turn: 6,
      activeScenario: 'refund',
      activeStep: 'submitted',
      variables: { order_id: 'A-10234', order_status: 'delivered' },
    });
    expect(stored.history).toHaveLength(12);
  }, 120_000);

  it('rejects a turn while another turn holds the session, and records why', async () => {
    const store = dynamoSessionStore(session.dynamo.client, session.tables.SESSIONS_TABLE!);
    await store.begin('busy-1', 'a-running-turn', new Date());
    const rejected = await session.runInput({ sessionId: 'busy-1', message: 'I want a refund' }, 'busy.json');
    expect(rejected.status).toBe('SUCCEEDED');
    expect(rejected.steps.map((s) => s.name)).toEqual(['01-load-session', '11-handoff']);
    expect(last(rejected)).toMatchObject({
      outcome: 'rejected-busy',
      reply: expect.stringContaining('still being processed'),
    });
    expect(rejected.toolCalls[0]!.error).toMatch(
      /^SessionBusyError: session busy-1 is busy: turn a-running-turn is still running/,
    );
    await store.release('busy-1', 'a-running-turn');
    const next = await session.runInput({ sessionId: 'busy-1', message: 'I want a refund' }, 'after.json');
    expect(last(next)).toMatchObject({ outcome: 'answered', turn: 1 });
  }, 120_000);

  it('migrates a session stored under profile schema 1 on its next turn, and saves it under schema 2', async () => {
    const { profileSchemaVersion: _, ...v1 } = {
      ...newSession('old-1'),
      version: 3,
      turn: 3,
      profile: { language: 'German', phone: '+49 30 1234', country: 'DE' },
    };
    await DynamoDBDocumentClient.from(session.dynamo.client).send(
      new PutCommand({
        TableName: session.tables.SESSIONS_TABLE!,
        Item: { pk: 'SESSION#old-1', sk: 'SESSION', session: v1, version: 3 },
      }),
    );
    const run = await session.runInput({ sessionId: 'old-1', message: 'I want a refund' }, 'old.json');
    expect(run.steps[0]!.fields.profileMigration).toEqual({
      from: 1,
      to: 2,
      renamed: ['language→preferred_language'],
      dropped: ['phone'],
    });
    expect(last(run)).toMatchObject({ outcome: 'answered', turn: 4, profileSchemaVersion: 2 });
    const stored = await dynamoSessionStore(session.dynamo.client, session.tables.SESSIONS_TABLE!).begin(
      'old-1',
      'probe-2',
      new Date(),
    );
    expect(stored).toMatchObject({
      version: 4,
      profileSchemaVersion: 2,
      profile: { preferred_language: 'German', country: 'DE' },
    });
    expect(stored.profile).not.toHaveProperty('phone');
  }, 120_000);

  it('records every enforcement verdict (rule, lane, variables, pass/fail) in the event log', async () => {
    const run = await session.runInput({ sessionId: 'log-1', message: 'I want a $75 refund now' }, 'limit.json');
    const events = await session.events(run.executionName!);
    type Attempts = {
      attempts: { verdicts: { check: string; lane: string; passed: boolean; variables?: unknown }[] }[];
    };
    const enforcement = events.flatMap((e) =>
      e.type === 'StepCompleted' && e.step === '09-enforce' ? [e.fields.enforcement as Attempts] : [],
    );
    expect(enforcement).toHaveLength(2);
    const final = enforcement.at(-1)!.attempts;
    expect(final).toHaveLength(2);
    expect(final[0]!.verdicts).toContainEqual({
      check: 'refund-limit',
      lane: 'deterministic',
      passed: false,
      variables: { 'response.max_amount': 75, 'session.refund_approved': null },
      message: expect.any(String),
    });
    expect(final[0]!.verdicts.map((v) => `${v.check}/${v.lane}`)).toEqual([
      'refund-limit/deterministic',
      'no-competitor/deterministic',
      'own-links-only/deterministic',
      'stay-polite/judge',
      'grounding/judge',
      'relevance/deterministic',
    ]);
    expect(last(run)).toMatchObject({ outcome: 'fallback' });
  }, 120_000);
});
