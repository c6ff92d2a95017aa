/**
 * Deployed executions in the local state: a GetExecutionHistory response from a file, or read by
 * ARN with --aws (aws-sdk-client-mock: read-only calls only), opens like a local execution.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  GetExecutionHistoryCommand,
  ListExecutionsCommand,
  ListStateMachinesCommand,
  SFNClient,
} from '@aws-sdk/client-sfn';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { loadWorkflow } from '../../../src/definitions/workflow/loader.ts';
import { forkPoints } from '../../../src/local/records/fork.ts';
import { readStoredExecution, stateTransitions, stepTrail } from '../../../src/local/records/history.ts';
import {
  deployedStateMachineNames,
  executionFromHistory,
  importFromAws,
  listDeployedExecutions,
  storeImported,
} from '../../../src/local/records/import.ts';
import { stateDirs } from '../../../src/local/records/state-dirs.ts';
import { AWS_ARN, AWS_EXECUTION, AWS_FIXTURE } from '../../support/fixtures.ts';

/** The steps the deployed case-desk execution ran. */
const STEPS = ['01-read-request', '02-look-up', '03a-open-case', '05-confirm'];
const history = () => JSON.parse(readFileSync(AWS_FIXTURE, 'utf8')) as { events: Record<string, unknown>[] };
const root = mkdtempSync(join(tmpdir(), 'stepwise-import-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('a GetExecutionHistory file', () => {
  it('reads as an execution record: status, workflow, the step trail with outputs, tokens and model requests', () => {
    const record = executionFromHistory(history(), AWS_ARN);
    expect(record).toMatchObject({
      name: AWS_EXECUTION,
      status: 'SUCCEEDED',
      workflow: 'case-desk',
    });
    expect(record.stateMachine).toBe(
      'arn:aws:states:eu-west-1:210987654321:stateMachine:Stepwise-CaseDesk-dev-case-desk',
    );
    expect(record.startDate.toISOString()).toBe('2025-03-14T09:26:53.412Z');
    const trail = stepTrail(record.events);
    expect(trail.map((s) => s.name)).toEqual(STEPS);
    const opened = trail[2]!.output as {
      usage: { inputTokens: number };
      transcript: { provider: string; modelId: string };
      toolCalls: { tool: string }[];
    };
    expect(opened.transcript).toMatchObject({
      provider: 'bedrock',
      modelId: 'anthropic.claude-3-5-haiku-20241022-v1:0',
    });
    expect(opened.usage.inputTokens).toBeGreaterThan(100);
    expect(opened.toolCalls.map((c) => c.tool)).toContain('open_case');
    expect(stateTransitions(record.events)).toBe(10);
  });

  it('can be forked from every step it ran', () => {
    const points = forkPoints(executionFromHistory(history(), AWS_ARN), loadWorkflow('case-desk'));
    expect(points.map((p) => p.step)).toEqual(STEPS);
  });

  it('takes the ARN from the file, and timestamps in epoch seconds (CLI v1) or milliseconds', () => {
    const seconds = history();
    seconds.events = seconds.events.map((e) => ({ ...e, timestamp: Date.parse(e.timestamp as string) / 1000 }));
    expect(executionFromHistory({ ...seconds, executionArn: AWS_ARN }).startDate.toISOString()).toBe(
      '2025-03-14T09:26:53.412Z',
    );
  });

  it.each([
    ['no events', { events: [] }, AWS_ARN, /events: no events/],
    ['an event without a type', { events: [{ id: 1, timestamp: 0 }] }, AWS_ARN, /events\.0\.type/],
    ['a first page only', { ...history(), nextToken: 'AAAA' }, AWS_ARN, /more pages/],
    ['no ARN', history(), undefined, /ARN is missing/],
    [
      'an ARN that is no execution',
      history(),
      'arn:aws:states:eu-west-1:1:stateMachine:x',
      /not a Step Functions execution ARN/,
    ],
    ['a list', [1, 2], AWS_ARN, /not a GetExecutionHistory response: \(root\)/],
  ])('refuses %s with one line', (_, json, arn, message) => {
    expect(() => executionFromHistory(json, arn)).toThrow(message);
  });

  it('is stored among the imports, read back by name, and marked as imported', () => {
    const dirs = stateDirs(join(root, 'file'));
    storeImported(executionFromHistory(history(), AWS_ARN), dirs.imports, 'file', new Date('2025-03-15T00:00:00Z'));
    const read = readStoredExecution(AWS_EXECUTION, dirs);
    expect(read.imported).toEqual({ from: 'file', at: '2025-03-15T00:00:00.000Z' });
    expect(read.events).toHaveLength(history().events.length);
  });
});

describe('--aws (read-only, the SFN client)', () => {
  const sfn = mockClient(SFNClient);
  beforeEach(() => sfn.reset());
  afterAll(() => sfn.restore());
  const client = new SFNClient({ region: 'eu-west-1' });
  const machineArn = (name: string) => `arn:aws:states:eu-west-1:210987654321:stateMachine:${name}`;

  it('finds the project workflows’ state machines by their readable names in every environment, and lists their executions newest first', async () => {
    sfn.on(ListStateMachinesCommand, { nextToken: undefined }).resolves({
      stateMachines: [
        {
          name: 'Stepwise-CaseDesk-dev-case-desk',
          stateMachineArn: machineArn('Stepwise-CaseDesk-dev-case-desk'),
          type: 'STANDARD',
          creationDate: new Date(),
        },
      ],
      nextToken: 'page-2',
    });
    sfn.on(ListStateMachinesCommand, { nextToken: 'page-2' }).resolves({
      stateMachines: [
        {
          name: 'SomeoneElses-Machine',
          stateMachineArn: machineArn('SomeoneElses-Machine'),
          type: 'STANDARD',
          creationDate: new Date(),
        },
        {
          name: 'Stepwise-CheckpointReview-prod-checkpoint-review',
          stateMachineArn: machineArn('Stepwise-CheckpointReview-prod-checkpoint-review'),
          type: 'STANDARD',
          creationDate: new Date(),
        },
      ],
    });
    sfn.on(ListExecutionsCommand, { stateMachineArn: machineArn('Stepwise-CaseDesk-dev-case-desk') }).resolves({
      executions: [
        {
          executionArn: AWS_ARN,
          name: 'email-735d',
          stateMachineArn: machineArn('x'),
          status: 'SUCCEEDED',
          startDate: new Date('2025-03-14T09:26:53Z'),
          stopDate: new Date('2025-03-14T09:26:58Z'),
        },
      ],
    });
    sfn
      .on(ListExecutionsCommand, { stateMachineArn: machineArn('Stepwise-CheckpointReview-prod-checkpoint-review') })
      .resolves({
        executions: [
          {
            executionArn: `${AWS_ARN}-2`,
            name: 'review-1',
            stateMachineArn: machineArn('y'),
            status: 'RUNNING',
            startDate: new Date('2025-03-15T08:00:00Z'),
          },
        ],
      });
    const listed = await listDeployedExecutions(client);
    expect(listed.map((e) => [e.name, e.workflow, e.status])).toEqual([
      ['review-1', 'checkpoint-review', 'RUNNING'],
      ['email-735d', 'case-desk', 'SUCCEEDED'],
    ]);
    expect(sfn.commandCalls(ListExecutionsCommand).map((c) => c.args[0].input.stateMachineArn)).not.toContain(
      machineArn('SomeoneElses-Machine'),
    );
    // Read-only: nothing but List* was called.
    expect(sfn.calls().every((c) => /^List/.test(c.args[0].constructor.name))).toBe(true);
    expect(
      deployedStateMachineNames(['case-desk'], ['dev', 'staging', 'prod']).get('Stepwise-CaseDesk-staging-case-desk'),
    ).toBe('case-desk');
  });

  it('imports an execution by ARN: every page of its history, stored like a file import', async () => {
    const { events } = history();
    sfn
      .on(GetExecutionHistoryCommand, { executionArn: AWS_ARN, nextToken: undefined })
      .resolves({ events: events.slice(0, 20).map(sdkEvent), nextToken: 't2' });
    sfn
      .on(GetExecutionHistoryCommand, { executionArn: AWS_ARN, nextToken: 't2' })
      .resolves({ events: events.slice(20).map(sdkEvent) });
    const dirs = stateDirs(join(root, 'aws'));
    const record = await importFromAws(AWS_ARN, client, dirs.imports);
    expect(record.imported?.from).toBe('aws');
    expect(record.events).toHaveLength(events.length);
    expect(readStoredExecution(record.name, dirs).status).toBe('SUCCEEDED');
  });
});

/** An event as the SDK returns it (a Date timestamp). */
const sdkEvent = (e: Record<string, unknown>) => ({ ...e, timestamp: new Date(e.timestamp as string) }) as never;
