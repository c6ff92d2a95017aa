/**
 * Property-based tests (fast-check) of the whole AWS path run locally — the lifecycle's bus, generated
 * Express state machine, DynamoDB Local — under random event sequences, concurrent batches and
 * redeliveries: states stay inside the statechart, the version counts applied transitions, the
 * log is gap-free, every event id is logged once, no concurrent update is lost (the log replays to
 * the same snapshot), and the CRM converges on the final state.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadStateName } from '../../../../src/cdk/constructs/lifecycle-workflow.ts';
import type { EntitySnapshot, LifecycleEvent, LoggedEvent } from '../../../../src/definitions/lifecycle/schema.ts';
import { sessionDynamoDb } from '../../../../src/local/cloud/dynamodb-connection.ts';
import type { DynamoDbLocal } from '../../../../src/local/cloud/dynamodb-local.ts';
import { LifecycleSession } from '../../../../src/local/sessions/lifecycle-session.ts';
import { applyEvent, initialSnapshot } from '../../../../src/runtime/lifecycle/transition.ts';
import { agent, def, LIFECYCLE } from '../../../runtime/lifecycle/support.ts';

const config = agent('attend-call');
const T0 = Date.parse('2025-03-01T09:00:00Z');
let ddb: DynamoDbLocal;
let session: LifecycleSession;
let runs = 0;

beforeAll(async () => {
  ddb = await sessionDynamoDb();
  session = await LifecycleSession.start({ lifecycle: LIFECYCLE, dynamo: ddb, agentConfig: config });
});
afterAll(async () => {
  await session?.stop();
  await ddb?.stop();
});

const isRaised = (e: LoggedEvent) =>
  e.detail?.triggeredBy !== undefined && e.id === `${String(e.detail.triggeredBy)}:${e.type}`;
const applied = (e: LoggedEvent) => e.stateBefore !== e.stateAfter || e.actions.some((a) => a.type !== 'refuse');

/** Every invariant of a member after `sentIds` were put (in any order, any number of times). */
async function checkMember(
  memberId: string,
  sentIds: Set<string>,
): Promise<{ snapshot: EntitySnapshot; log: LoggedEvent[] }> {
  const lifecycle = session.definition;
  const snapshot = (await session.store.getEntity(memberId))!;
  const log = await session.store.listEvents(memberId);
  expect(lifecycle.leaves).toContain(snapshot.state);
  for (const e of log) expect([e.stateBefore, e.stateAfter].every((s) => lifecycle.leaves.includes(s))).toBe(true);
  expect(log.map((e) => e.seq)).toEqual(log.map((_, i) => i + 1));
  expect(snapshot.eventCount).toBe(log.length);
  expect(snapshot.version).toBe(log.filter(applied).length);
  const triggers = log.filter((e) => !isRaised(e));
  expect(triggers.map((e) => e.id).sort()).toEqual([...sentIds].sort());

  // Linearizable: applying the logged triggers in log order from a new member gives this exact log and snapshot.
  let replayed = initialSnapshot(lifecycle);
  const relogged: LoggedEvent[] = [];
  for (const { id, type, time, detail } of triggers) {
    const r = applyEvent(
      lifecycle,
      replayed,
      { id, entityId: memberId, type, time, ...(detail && { detail }) },
      config,
    );
    replayed = r.snapshot;
    relogged.push(...r.events);
  }
  expect(relogged).toEqual(log);
  expect(replayed).toEqual(snapshot);

  // The CRM's newest update is the final position, whatever order the listeners ran in.
  const newest = session.crm.calls.filter((c) => c.entityId === memberId).sort((a, b) => b.version - a.version)[0];
  expect(newest?.state ?? lifecycle.initial).toBe(snapshot.state);
  if (newest) expect(newest.followUpsStopped).toBe(snapshot.context.followUpsStopped);
  return { snapshot, log };
}

const eventArb: fc.Arbitrary<{ type: string; detail?: Record<string, unknown> }> = fc.oneof(
  fc.constantFrom(...def.events.filter((t) => t !== 'crm.state_set')).map((type) => ({ type })),
  fc
    .constantFrom('engaged', 'booked', 'no_show', 'closed', 'goal_hit', 'stopped', 'hot')
    .map((state) => ({ type: 'crm.state_set', detail: { state } })),
  fc.constant({ type: 'member.sneezed' }),
);
/** A new event, or the redelivery of one sent in an earlier batch. */
const stepArb = fc.oneof(
  { weight: 5, arbitrary: eventArb.map((e) => ({ new: e })) },
  { weight: 1, arbitrary: fc.nat().map((pick) => ({ redeliver: pick })) },
);
/** Batches of events put at once (the same time: applied concurrently), one batch after the other. */
const scenarioArb = fc.array(fc.array(stepArb, { minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 5 });

describe('lifecycle properties over the local bus and DynamoDB Local', () => {
  it('random sequences, concurrent batches and redeliveries keep every invariant', async () => {
    await fc.assert(
      fc.asyncProperty(scenarioArb, async (batches) => {
        const memberId = `prop-${++runs}`;
        const sent: LifecycleEvent[] = [];
        for (const [b, batch] of batches.entries()) {
          const time = new Date(T0 + b * 60_000).toISOString();
          const earlier = [...sent];
          const events = batch.flatMap((step, i): LifecycleEvent[] => {
            if ('new' in step) return [{ id: `${memberId}-${b}-${i}`, entityId: memberId, time, ...step.new }];
            return earlier.length ? [earlier[step.redeliver % earlier.length]!] : [];
          });
          sent.push(...events.filter((e) => !sent.includes(e)));
          await session.put(events);
          await session.drain();
        }
        expect(session.sentDeadLetters.map((d) => (d.body as { error?: unknown }).error)).toEqual([]);
        // Only redeliveries of nothing: no event was put, so there is no member. The property must
        // return nothing: fast-check reads any returned value but `true`/`undefined` as a failure.
        if (sent.length === 0) {
          expect(await session.store.getEntity(memberId)).toBeUndefined();
          return;
        }
        await checkMember(memberId, new Set(sent.map((e) => e.id)));
      }),
      { numRuns: 8 },
    );
    expect(session.failedExecutions).toEqual([]);
    expect(session.sentDeadLetters).toEqual([]);
  });

  it('loses no update when 20 events for one member arrive at once', async () => {
    const memberId = 'concurrent-20';
    const types = [
      'agent.message_sent',
      'member.message_sent',
      'link.clicked',
      'follow_ups.exhausted',
      'call.booked',
      'call.missed',
      'conversation.stopped',
      'call.attended',
    ];
    const events: LifecycleEvent[] = types
      .flatMap((type, t) =>
        [0, 1, 2].map((k) => ({ id: `${memberId}-${t}-${k}`, entityId: memberId, type, time: '2025-03-02T09:00:00Z' })),
      )
      .slice(0, 20);
    const before = session.executions.length;
    await session.put(events);
    await session.drain();
    const { snapshot } = await checkMember(memberId, new Set(events.map((e) => e.id)));
    expect(snapshot.eventCount).toBeGreaterThanOrEqual(20);
    const mine = session.executions.slice(before);
    expect(mine).toHaveLength(20);
    expect(mine.every((e) => e.status === 'SUCCEEDED')).toBe(true);
    // They did contend: some re-read after a version conflict.
    const loads = mine.map(
      (e) => e.events.filter((h) => h.stateEnteredEventDetails?.name === loadStateName(session.definition)).length,
    );
    expect(Math.max(...loads)).toBeGreaterThan(1);
  });

  it('changes nothing when EventBridge redelivers an event, even concurrently with itself', async () => {
    const memberId = 'redelivered';
    await session.put([
      { id: `${memberId}-1`, entityId: memberId, type: 'agent.message_sent', time: '2025-03-03T09:00:00Z' },
    ]);
    await session.drain();
    // A redelivery carries the same envelope (same EventBridge id); no producer eventId here.
    const envelope = {
      version: '0',
      id: 'eb-redelivered',
      'detail-type': 'member.message_sent',
      source: 'stepwise.crm',
      account: '123456789012',
      time: '2025-03-03T10:00:00Z',
      region: 'us-east-1',
      resources: [],
      detail: { memberId },
    };
    const runs = await Promise.all([1, 2, 3].map(() => session.runtime.startExecution(LIFECYCLE, envelope)));
    await session.drain();
    expect(runs.map((r) => r.status)).toEqual(['SUCCEEDED', 'SUCCEEDED', 'SUCCEEDED']);
    const after = await checkMember(memberId, new Set([`${memberId}-1`, 'eb-redelivered']));
    const again = await session.runtime.startExecution(LIFECYCLE, envelope);
    expect(again.events.some((h) => h.stateEnteredEventDetails?.name === 'Duplicate')).toBe(true);
    expect(await session.store.getEntity(memberId)).toEqual(after.snapshot);
    expect(await session.store.listEvents(memberId)).toEqual(after.log);
  });
});
