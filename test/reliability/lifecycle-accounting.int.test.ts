/**
 * No lifecycle event is lost without a record (docs/guarantees.md, 3): every event put on a
 * lifecycle's bus is applied, recorded as a duplicate, or refused with its reason into a queue that
 * has an alarm; the replay CLI reports every event that was not applied and exits non-zero. Here:
 * events whose detail is 60 to 240 KB, an event without an entity id, an event from a source no
 * rule applies, and an execution that failed without a dead letter. Local runtime, local bus,
 * DynamoDB Local.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as lead from '../../lambdas/workflows/lead-lifecycle/cli.ts';
import { loadLifecycle } from '../../src/definitions/lifecycle/loader.ts';
import type { LifecycleEvent } from '../../src/definitions/lifecycle/schema.ts';
import { sessionDynamoDb } from '../../src/local/cloud/dynamodb-connection.ts';
import type { DynamoDbLocal } from '../../src/local/cloud/dynamodb-local.ts';
import { MAX_PUT_EVENTS_BYTES } from '../../src/local/cloud/eventbridge/bus.ts';
import { failuresOf, LifecycleSession, parseReplayFile } from '../../src/local/sessions/lifecycle-session.ts';
import { MAX_EVENT_BYTES } from '../../src/runtime/lifecycle/envelope.ts';
import { runCli, useCliCapture } from '../support/cli.ts';
import { useTempDirs } from '../support/tmp.ts';
import { recordFigure } from './figures.ts';

const def = loadLifecycle('lead-lifecycle');
const KB = 1024;
let ddb: DynamoDbLocal;
beforeAll(async () => {
  ddb = await sessionDynamoDb();
});
afterAll(() => ddb?.stop());

/** A lead event whose detail (a message text) makes it about `bytes` long on the bus. */
const sized = (n: number, bytes: number): LifecycleEvent => ({
  id: `big-${n}`,
  entityId: `lead-big-${n}`,
  type: 'lead.message_sent',
  time: `2026-03-0${(n % 9) + 1}T09:00:00Z`,
  detail: { text: 'x'.repeat(bytes - 200) },
});

describe('oversize lifecycle events', () => {
  it('applies events of 60 to 240 KB with their whole detail, and refuses a larger one into the dead-letter queue with its reason', {
    timeout: 300_000,
  }, async () => {
    const applicable = [60, 90, 120, 150, 170, 200, 230].map((kb, i) => sized(i, kb * KB));
    // Over the lifecycle's 240 KiB, under EventBridge's 256 KiB: the bus takes it, the lifecycle refuses it.
    const refused = sized(8, MAX_EVENT_BYTES + 4 * KB);
    const session = await LifecycleSession.start({ lifecycle: def.name, dynamo: ddb });
    try {
      await session.put([...applicable, refused]);
      await session.drain();
      for (const event of applicable) {
        const [logged] = await session.store.listEvents(event.entityId);
        expect(logged?.detail, event.id).toEqual(event.detail);
      }
      expect(await session.store.getEntity(refused.entityId)).toBeUndefined();
      const failed = failuresOf(session);
      expect(failed).toEqual([
        {
          kind: 'event',
          entityId: refused.entityId,
          eventId: refused.id,
          error: expect.stringMatching(
            /^EventTooLargeError: event \S+ \(lead\.message_sent from stepwise\.replay\) is \d+ bytes; a lifecycle applies events of at most 245760$/,
          ),
        },
      ]);
      expect(session.sentDeadLetters).toHaveLength(1);
      // An event EventBridge itself refuses never reaches the bus: the producer is told at once.
      await expect(session.put([sized(9, MAX_PUT_EVENTS_BYTES + KB)])).rejects.toThrow(
        /Total size of the entries in the request is over the limit/,
      );
      const all = [...applicable, refused];
      const accounted = all.filter((e) =>
        session.executions.some((x) => (x.input as { detail: { eventId: string } }).detail.eventId === e.id),
      ).length;
      expect(accounted).toBe(all.length);
      recordFigure(
        'oversize lead events',
        `${accounted}/${all.length} accounted (${applicable.length} applied, 60 to 230 KB; ${failed.length} over ${MAX_EVENT_BYTES / KB} KiB refused into the dead-letter queue with its reason; entries of 256 KiB refused by PutEvents)`,
      );
    } finally {
      await session.stop();
    }
  });
});

describe('events that name no entity, or come from a source no rule applies', () => {
  it('accounts for all 8 events put, one without an entity id, and queues one from an unknown source', {
    timeout: 120_000,
  }, async () => {
    const session = await LifecycleSession.start({ lifecycle: def.name, store: 'memory' });
    try {
      const entry = (n: number, detail: Record<string, unknown>, source = 'stepwise.crm') => ({
        EventBusName: session.busName,
        Source: source,
        DetailType: 'agent.message_sent',
        Time: new Date('2026-04-01T09:00:00Z'),
        Detail: JSON.stringify({ eventId: `e-${n}`, ...detail }),
      });
      const entries = Array.from({ length: 8 }, (_, n) =>
        entry(n, n === 3 ? { note: 'no lead' } : { leadId: `lead-${n}` }),
      );
      const put = [
        ...(await session.bus.putEvents(entries)).Entries,
        ...(await session.bus.putEvents([entry(9, { leadId: 'lead-9' }, 'stepwise.crn')])).Entries,
      ];
      expect(put.every((e) => e.EventId)).toBe(true);
      await session.drain();
      expect(session.executions).toHaveLength(8);
      expect(session.executions.filter((e) => e.status === 'SUCCEEDED')).toHaveLength(7);
      expect(failuresOf(session)).toEqual([
        {
          kind: 'event',
          eventId: 'e-3',
          error: 'InvalidInputError: EventBridge event: detail.leadId: missing: the event names no lead',
        },
        {
          kind: 'unrouted',
          source: 'stepwise.crn',
          eventType: 'agent.message_sent',
          error: 'no rule of lead-lifecycle applies events from this source',
        },
      ]);
    } finally {
      await session.stop();
    }
  });

  it('reports an execution that failed without a dead letter, with its own error', () => {
    const failed = {
      input: { id: 'eb-1', detail: { leadId: 'lead-1', eventId: 'e-1' } },
      status: 'FAILED',
      error: { Error: 'States.DataLimitExceeded', Cause: 'too big' },
    };
    const session = {
      definition: def,
      failedExecutions: [failed],
      sentDeadLetters: [],
      queuedEvents: [],
      listenerDeadLetters: [],
      publishDeadLetters: { outbox: [], timers: [] },
    };
    expect(failuresOf(session as unknown as LifecycleSession)).toEqual([
      {
        kind: 'event',
        entityId: 'lead-1',
        eventId: 'e-1',
        error: 'States.DataLimitExceeded: too big (not dead-lettered)',
      },
    ]);
  });
});

describe('stepwise lead replay of oversize events', () => {
  const io = useCliCapture();
  const dir = useTempDirs('stepwise-oversize-')();

  it('reports the event it could not apply, and a line EventBridge would refuse, and exits 1', {
    timeout: 120_000,
  }, async () => {
    const line = (e: LifecycleEvent) =>
      JSON.stringify({ id: e.id, leadId: e.entityId, type: e.type, time: e.time, detail: e.detail });
    const events = [sized(0, 60 * KB), sized(1, 170 * KB), sized(2, MAX_EVENT_BYTES + 4 * KB), sized(3, 300 * KB)];
    const file = join(dir, 'big.jsonl');
    writeFileSync(file, events.map(line).join('\n'));
    expect(parseReplayFile(events.map(line).join('\n'), def).malformed).toEqual([
      {
        line: 4,
        error: expect.stringMatching(
          /^the event is \d+ bytes as a PutEvents entry; EventBridge takes entries under 262144$/,
        ),
      },
    ]);
    expect(await runCli([lead], 'lead', 'replay', file, '--in-memory', '--json')).toBe(1);
    expect(Object.keys(JSON.parse(io.out).leads)).toEqual(['lead-big-0', 'lead-big-1']);
    expect(io.err).toContain(`${file}: 4 lines, 3 events sent (0 already logged), 1 malformed`);
    expect(io.err).toContain(`${file}:4: skipped malformed line: the event is`);
    expect(io.err).toMatch(/stepwise: event big-2 of lead lead-big-2 was not applied: EventTooLargeError: /);
  });

  it('exits 1 when the only event not applied is a line EventBridge would refuse', { timeout: 120_000 }, async () => {
    const line = (e: LifecycleEvent) =>
      JSON.stringify({ id: e.id, leadId: e.entityId, type: e.type, time: e.time, detail: e.detail });
    const file = join(dir, 'one-too-big.jsonl');
    writeFileSync(file, [sized(0, 10 * KB), sized(1, 300 * KB)].map(line).join('\n'));
    expect(await runCli([lead], 'lead', 'replay', file, '--in-memory', '--json')).toBe(1);
    expect(Object.keys(JSON.parse(io.out).leads)).toEqual(['lead-big-0']);
    expect(io.err).toContain(`${file}: 2 lines, 1 events sent (0 already logged), 1 malformed`);
    expect(io.err).not.toContain('was not applied');
  });
});
