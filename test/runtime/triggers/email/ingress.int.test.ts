/**
 * The ingress against DynamoDB Local and the local runtime running the synthesized ASL of an email workflow (the
 * fixture project's case-desk). The steps are scripted (handlerOverrides): this file is about what reaches the state
 * machine, not about what the steps do.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalExecution, LocalRuntime } from '../../../../src/local/asl/runtime.ts';
import { sessionDynamoDb } from '../../../../src/local/cloud/dynamodb-connection.ts';
import type { DynamoDbLocal } from '../../../../src/local/cloud/dynamodb-local.ts';
import type { StepInput } from '../../../../src/runtime/contracts/step.ts';
import { dynamoEventLog } from '../../../../src/runtime/event-log.ts';
import { DEFAULT_POLICY, localSesMessageId } from '../../../../src/runtime/triggers/email/checks.ts';
import { type IngestDeps, ingest } from '../../../../src/runtime/triggers/email/ingest.ts';
import { localStarter } from '../../../../src/runtime/triggers/email/starter.ts';
import { dynamoEmailStore } from '../../../../src/runtime/triggers/email/store.ts';
import { localView, synthApp } from '../../../cdk/template.ts';
import { createTable } from '../../tools/fixtures.ts';
import { emailStoreConformance } from './email-store-conformance.ts';
import { sample, withHeaders } from './fixtures.ts';

let ddb: DynamoDbLocal;
/** This file's tables on the suite's shared emulator. */
const table = (name: string) => `${ddb.tablePrefix}${name}`;
let runtime: LocalRuntime;
/** What the entry step was given, per execution. */
const entryInputs: StepInput[] = [];

const scripted = (next: string) => (input: StepInput) => ({
  step: input.step,
  next,
  reason: 'scripted',
  decidedBy: 'code',
  fields: {},
  data: {},
  count: input.count,
});

beforeAll(async () => {
  ddb = await sessionDynamoDb();
  await Promise.all([createTable(ddb.client, table('Emails')), createTable(ddb.client, table('Events'))]);
  runtime = await LocalRuntime.create({
    app: localView(synthApp('dev')),
    historyDir: false,
    handlerOverrides: {
      '01-read-request': (input: StepInput) => (entryInputs.push(input), scripted('03c-ask-ref')(input)),
      '03c-ask-ref': scripted('DONE'),
    },
  });
});
afterAll(async () => ddb?.stop());

emailStoreConformance('dynamodb', () => dynamoEmailStore(ddb.client, table('Emails')));

describe('ingest on the local runtime', () => {
  // Started executions, awaited to their end (the local starter answers once an execution runs, like StartExecution).
  const started: Promise<LocalExecution>[] = [];
  const finished = () => Promise.all(started);
  const deps = (): IngestDeps => ({
    emails: dynamoEmailStore(ddb.client, table('Emails')),
    events: dynamoEventLog(ddb.client, table('Events')),
    starter: localStarter(runtime, 'case-desk', (_name, e) => void started.push(e)),
    policy: { ...DEFAULT_POLICY, ownAddresses: ['cases@dev.desk.example.com'] },
    clock: () => new Date('2026-11-21T09:14:03.000Z'),
  });

  it('starts one execution for an email delivered twice and sent again, and records the copy sent again', async () => {
    const raw = sample('valid');
    const resent = withHeaders(raw, { add: ['Received: from relay2.example.org (relay2.example.org [192.0.2.14])'] });
    const first = await ingest(raw, undefined, await localSesMessageId(raw), deps());
    const redelivered = await ingest(raw, undefined, await localSesMessageId(raw), deps());
    const again = await ingest(resent, undefined, await localSesMessageId(resent), deps());

    expect(first.status).toBe('STARTED');
    expect(redelivered).toEqual({ status: 'DUPLICATE', executionName: first.executionName });
    expect(again).toEqual({
      status: 'DUPLICATE',
      executionName: first.executionName,
      recordedAs: `email-${await localSesMessageId(resent)}`,
    });
    expect((await finished()).map((e) => [e.name, e.status])).toEqual([[first.executionName, 'SUCCEEDED']]);
    const log = dynamoEventLog(ddb.client, table('Events'));
    expect((await log.list(first.executionName)).map((e) => e.type)).toEqual(['IngressAccepted']);
    expect(await log.list(again.status === 'DUPLICATE' ? again.recordedAs! : '')).toEqual([
      expect.objectContaining({
        type: 'IngressRejected',
        reason: 'duplicate_message_id',
        detail: `this Message-ID was already delivered as ${first.executionName}; nothing new started`,
      }),
    ]);
  });

  it('hands the entry step the ingress record and a pointer to the stored body, not the body', async () => {
    const { email } = entryInputs[0]!.input as { email: { id: string; from: string; bodyChars: number } };
    expect(email.from).toBe('nora.kent@example.org');
    expect(JSON.stringify(entryInputs[0]!.input)).not.toContain('flickers');
    const stored = await dynamoEmailStore(ddb.client, table('Emails')).get(email.id);
    expect(stored?.body).toContain('flickers');
    expect(stored?.body.length).toBe(email.bodyChars);
  });

  it('starts nothing for a refused mail and records why', async () => {
    const before = started.length;
    const raw = sample('spam');
    const result = await ingest(raw, undefined, await localSesMessageId(raw), deps());
    expect(result).toMatchObject({ status: 'REJECTED', reason: 'spam' });
    expect(started).toHaveLength(before);
    expect(await dynamoEventLog(ddb.client, table('Events')).list(result.executionName)).toEqual([
      expect.objectContaining({ type: 'IngressRejected', reason: 'spam', detail: 'spamVerdict: FAIL' }),
    ]);
  });
});
