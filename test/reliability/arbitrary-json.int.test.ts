/**
 * Arbitrary JSON where the outside world puts it: a lifecycle event's detail, a step's fields and
 * tool arguments in the event log, a conversation's variables and profile in the turn pipeline's
 * session store. Keys like `__proto__` and `constructor`, numbers beyond 2^53 and beyond what a
 * DynamoDB number holds, nesting deeper than a DynamoDB map, and large strings: every event is
 * applied, recorded as a duplicate or dead-lettered with a reason, every store gives back exactly
 * what it was given, and no handler throws. Against DynamoDB Local (fast-check).
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dynamoSessionStore, newSession } from '../../lambdas/workflows/turn-pipeline/session.ts';
import { sessionDynamoDb } from '../../src/local/cloud/dynamodb-connection.ts';
import { createTablesFromTemplate, type DynamoDbLocal } from '../../src/local/cloud/dynamodb-local.ts';
import { LifecycleSession } from '../../src/local/sessions/lifecycle-session.ts';
import { dynamoEventLog, type StepCompletedEvent } from '../../src/runtime/event-log.ts';
import { dynamoLifecycleStore } from '../../src/runtime/lifecycle/store.ts';
import { applyEvent, initialSnapshot } from '../../src/runtime/lifecycle/transition.ts';
import { lifecycleApp } from '../local/sessions/lifecycle/support.ts';
import { createTable } from '../runtime/tools/fixtures.ts';

/** Keys that break naive code: prototype names, the offload marker, the empty key. */
const key = fc.oneof(
  fc.constantFrom('__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf', '$offloaded', ''),
  fc.string({ maxLength: 12 }),
);
/** Own enumerable properties only, `__proto__` included (an assignment would set the prototype instead). */
const objectOf = (entries: [string, unknown][]) =>
  entries.reduce<Record<string, unknown>>(
    (o, [k, v]) => Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true }),
    {},
  );
const number = fc.oneof(
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(2 ** 53 + 2, -(2 ** 60), 1e300, -1e-300, Number.MAX_VALUE, 123456789012345678901234567890),
  fc.bigInt({ min: 2n ** 53n, max: 2n ** 80n }).map(Number),
);
const leaf = fc.oneof(number, fc.string({ maxLength: 20 }), fc.boolean(), fc.constant(null));
const { value } = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    leaf,
    fc.array(tie('value'), { maxLength: 3 }),
    fc.array(fc.tuple(key, tie('value')), { maxLength: 4 }).map(objectOf),
  ),
}));
/** Nested past DynamoDB's 32 levels. */
const deep = fc
  .integer({ min: 33, max: 60 })
  .map((depth) => Array.from({ length: depth }).reduce<unknown>((inner) => ({ constructor: inner }), 'bottom'));
/**
 * Long enough to count; five of them still fit a DynamoDB item, and an EventBridge event (the oversize ones have their
 * own tests).
 */
const large = fc.integer({ min: 10_000, max: 45_000 }).map((n) => 'x'.repeat(n));
/** A JSON object as a producer sends it: any keys, big numbers, deep nesting, large strings. */
const jsonObject = fc
  .array(
    fc.tuple(
      key,
      fc.oneof({ weight: 6, arbitrary: value }, { weight: 1, arbitrary: deep }, { weight: 1, arbitrary: large }),
    ),
    { minLength: 1, maxLength: 5 },
  )
  .map(objectOf);

/** The same JSON (what crosses every Lambda and Step Functions boundary), keys in order. */
const text = (v: unknown) => JSON.stringify(v);

let ddb: DynamoDbLocal;
/** This file's tables on the suite's shared emulator. */
const table = (name: string) => `${ddb.tablePrefix}${name}`;
let lifecycleTable: string;
beforeAll(async () => {
  ddb = await sessionDynamoDb();
  lifecycleTable = Object.values(
    await createTablesFromTemplate(ddb.client, lifecycleApp().template, ddb.tablePrefix),
  )[0]!;
  await createTable(ddb.client, table('Events'));
  await createTable(ddb.client, table('Sessions'));
});
afterAll(() => ddb?.stop());

let n = 0;

describe('arbitrary JSON', () => {
  it('the lifecycle store logs any detail and reads back exactly what was sent', async () => {
    const store = dynamoLifecycleStore(ddb.client, lifecycleTable);
    const def =
      lifecycleApp() && (await import('../../src/definitions/lifecycle/loader.ts')).loadLifecycle('lead-lifecycle');
    await fc.assert(
      fc.asyncProperty(jsonObject, async (detail) => {
        const entityId = `json-${++n}`;
        const result = applyEvent(
          def,
          initialSnapshot(def),
          { id: `${entityId}-1`, entityId, type: 'link.clicked', time: '2026-01-01T00:00:00Z', detail },
          { goal: null, stopFollowUpsOn: [] },
        );
        expect(await store.append(entityId, 0, result)).toBe('APPENDED');
        const [logged] = await store.listEvents(entityId);
        expect(text(logged!.detail)).toBe(text(detail));
        expect(await store.append(entityId, 0, result)).toBe('DUPLICATE');
      }),
      { numRuns: 60 },
    );
  });

  it('the event log records any step fields, personal fields and tool arguments, and lists them back', async () => {
    const log = dynamoEventLog(ddb.client, table('Events'));
    await fc.assert(
      fc.asyncProperty(jsonObject, jsonObject, jsonObject, async (fields, personal, args) => {
        const event: StepCompletedEvent = {
          type: 'StepCompleted',
          executionName: `json-${++n}`,
          at: '2026-01-01T00:00:00.000Z',
          step: '02-extract-context',
          count: 2,
          next: '03-clarify',
          reason: 'extracted',
          decidedBy: 'model',
          durationMs: 12,
          usage: { modelCalls: 1, inputTokens: 10, outputTokens: 5, cacheReadInputTokens: 0, cacheWriteInputTokens: 0 },
          toolCalls: [{ tool: 'lookup_order', outcome: 'ok', args }],
          fields,
          personal: { fields: personal },
        };
        expect(await log.append(event)).toBe(true);
        expect(text(await log.list(event.executionName))).toBe(text([event]));
        expect(await log.append(event)).toBe(false);
      }),
      { numRuns: 40 },
    );
  });

  it('the session store commits any variables and profile, and the next turn reads them back', async () => {
    const store = dynamoSessionStore(ddb.client, table('Sessions'));
    await fc.assert(
      fc.asyncProperty(jsonObject, jsonObject, async (variables, profile) => {
        const sessionId = `json-${++n}`;
        const now = new Date('2026-01-01T00:00:00Z');
        const begun = await store.begin(sessionId, 'turn-1', now);
        expect(begun).toEqual(newSession(sessionId));
        const saved = await store.commit({ ...begun, turn: 1, variables, profile }, 'turn-1');
        const next = await store.begin(sessionId, 'turn-2', now);
        expect(text(next)).toBe(text(saved));
        expect(text(next.variables)).toBe(text(variables));
      }),
      { numRuns: 40 },
    );
  });

  it('through the lifecycle state machine: every event with any detail is applied or a duplicate, none dead-lettered, no handler fails', {
    timeout: 300_000,
  }, async () => {
    const session = await LifecycleSession.start({ lifecycle: 'lead-lifecycle', dynamo: ddb });
    try {
      await fc.assert(
        fc.asyncProperty(fc.array(jsonObject, { minLength: 1, maxLength: 4 }), async (details) => {
          const entityId = `flow-${++n}`;
          const events = details.map((detail, i) => ({
            id: `${entityId}-${i}`,
            entityId,
            type: i % 2 ? 'lead.message_sent' : 'agent.message_sent',
            time: `2026-01-01T00:0${i}:00Z`,
            detail,
          }));
          for (const event of events) {
            await session.put([event, event]); // and its redelivery
            await session.drain();
          }
          const logged = await session.store.listEvents(entityId);
          expect(text(logged.map((e) => e.detail))).toBe(text(details));
        }),
        { numRuns: 15 },
      );
      expect(session.failedExecutions.map((e) => e.error)).toEqual([]);
      expect(session.sentDeadLetters).toEqual([]);
      expect(session.executions.every((e) => e.status === 'SUCCEEDED')).toBe(true);
      expect(session.duplicates).toBeGreaterThan(0);
    } finally {
      await session.stop();
    }
  });
});
