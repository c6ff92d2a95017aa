/**
 * The transactional outbox: a committed change is published from the table's stream, so killing
 * the publish after the commit loses nothing. Runs the stack's pipe (filter, enrichment function,
 * target) locally over DynamoDB Local's stream.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InvalidInputError } from '../../../../src/core/errors.ts';
import type { LifecycleEvent } from '../../../../src/definitions/lifecycle/schema.ts';
import { sessionDynamoDb } from '../../../../src/local/cloud/dynamodb-connection.ts';
import type { DynamoDbLocal } from '../../../../src/local/cloud/dynamodb-local.ts';
import { LifecycleSession } from '../../../../src/local/sessions/lifecycle-session.ts';
import { changesOf } from '../../../../src/runtime/lifecycle/handlers/outbox.ts';
import { agent, LIFECYCLE } from '../../../runtime/lifecycle/support.ts';

const STATE_CHANGED = 'member.state_changed';

let ddb: DynamoDbLocal;
let session: LifecycleSession;
beforeAll(async () => {
  ddb = await sessionDynamoDb();
  session = await LifecycleSession.start({
    lifecycle: LIFECYCLE,
    dynamo: ddb,
    agentConfig: agent('attend-call'),
  });
});
afterAll(async () => {
  await session?.stop();
  await ddb?.stop();
});

const ev = (entityId: string, n: number, type: string, minute: number): LifecycleEvent => ({
  id: `${entityId}-${n}`,
  entityId,
  type,
  time: `2025-05-05T09:${String(minute).padStart(2, '0')}:00Z`,
});
const published = (entityId: string) =>
  session.bus.published.filter((e) => e['detail-type'] === STATE_CHANGED && e.detail.entityId === entityId);
const crmOf = (entityId: string) => session.crm.calls.filter((c) => c.entityId === entityId);

describe('the outbox', () => {
  it('publishes a committed change even when the publisher dies right after the commit', async () => {
    const entityId = 'outbox-killed';
    session.pipe.pause(); // the publish is killed: the state machine has committed, nothing reads the stream
    for (const [i, type] of ['agent.message_sent', 'member.message_sent', 'call.booked'].entries()) {
      await session.put([ev(entityId, i, type, i)]);
      await session.drain();
    }
    expect(session.executions.filter((x) => x.status !== 'SUCCEEDED')).toEqual([]);
    expect((await session.store.getEntity(entityId))!).toMatchObject({ state: 'booked', version: 4 });
    expect(published(entityId)).toEqual([]);
    expect(crmOf(entityId)).toEqual([]);

    session.pipe.resume(); // the publisher comes back: the records waited in the stream
    await session.drain();
    expect(published(entityId).map((e) => e.detail.changeId)).toEqual([
      `${entityId}:v1`,
      `${entityId}:v2`,
      `${entityId}:v4`,
    ]);
    expect(crmOf(entityId).map((c) => [c.state, c.version])).toEqual([
      ['outreach', 1],
      ['engaged', 2],
      ['booked', 4],
    ]);
    expect(session.publishDeadLetters.outbox).toEqual([]);
  });

  it('retries a failed put to the bus, then dead-letters the batch after the retries: nothing is dropped silently', async () => {
    const entityId = 'outbox-retried';
    session.pipe.failNextPuts(3); // fewer failures than the pipe's retries
    await session.put([ev(entityId, 0, 'agent.message_sent', 10)]);
    await session.drain();
    expect(published(entityId).map((e) => e.detail.changeId)).toEqual([`${entityId}:v1`]);

    const lost = 'outbox-dead-lettered';
    session.pipe.failNextPuts(1000);
    await session.put([ev(lost, 0, 'agent.message_sent', 20)]);
    await session.drain();
    session.pipe.failNextPuts(0);
    expect(published(lost)).toEqual([]);
    expect(session.publishDeadLetters.outbox).toHaveLength(1);
    expect(changesOf(session.publishDeadLetters.outbox[0]!.records)).toMatchObject([
      { changeId: `${lost}:v1`, to: 'outreach' },
    ]);
    session.pipe.deadLetters.length = 0;
  });

  it('publishes only outbox items, exactly the changes (logged-only events publish nothing)', async () => {
    const entityId = 'outbox-only-changes';
    const before = session.pipe.published;
    await session.put([ev(entityId, 0, 'agent.message_sent', 30)]);
    await session.drain();
    await session.put([ev(entityId, 1, 'agent.message_sent', 31)]); // logged only: no change
    await session.drain();
    expect(published(entityId).map((e) => e.detail.changeId)).toEqual([`${entityId}:v1`]);
    expect(session.pipe.published - before).toBe(1);
  });
});

describe('the outbox publisher (pipe enrichment)', () => {
  it('turns new outbox items into member.state_changed details and refuses anything else', async () => {
    const local = await LifecycleSession.start({
      lifecycle: LIFECYCLE,
      store: 'memory',
      agentConfig: agent('attend-call'),
    });
    try {
      await local.put([ev('enrich', 0, 'agent.message_sent', 0)]);
      await local.drain();
    } finally {
      await local.stop();
    }
    // The in-memory store's stream went through the same pipe: the change reached the CRM.
    expect(() =>
      changesOf([{ eventName: 'INSERT', dynamodb: { NewImage: { pk: { S: 'ENTITY#x' }, sk: { S: 'STATE' } } } }]),
    ).toThrow(InvalidInputError);
    expect(() =>
      changesOf([
        {
          eventName: 'INSERT',
          dynamodb: {
            NewImage: {
              pk: { S: 'ENTITY#x' },
              sk: { S: 'OUTBOX#0000000001' },
              detail: { M: { entityId: { S: 'x' } } },
            },
          },
        },
      ]),
    ).toThrow(/outbox item ENTITY#x\/OUTBOX#0000000001/);
    expect(() => changesOf({ not: 'a list' })).toThrow(InvalidInputError);
    expect(local.crm.calls).toMatchObject([{ entityId: 'enrich', state: 'outreach', version: 1 }]);
  });
});
