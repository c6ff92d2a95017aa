/**
 * One conformance suite for every LifecycleStore adapter (in memory, DynamoDB Local): the same
 * append/conflict/duplicate/listing behaviour, driven through the pure `applyEvent`.
 */
import { describe, expect, it } from 'vitest';
import { InvalidInputError, VersionConflictError } from '../../../src/core/errors.ts';
import type { EntitySnapshot, LifecycleEvent } from '../../../src/definitions/lifecycle/schema.ts';
import type { LifecycleStore } from '../../../src/runtime/lifecycle/store.ts';
import { applyEvent, initialSnapshot } from '../../../src/runtime/lifecycle/transition.ts';
import { agent, def } from './support.ts';

const config = agent('attend-call');
let members = 0;

/** A member id no other test of this run uses (adapters may share a table). */
export const freshMember = (prefix = 'member'): string =>
  `${prefix}-${process.pid}-${++members}-${Math.random().toString(36).slice(2, 8)}`;

function event(entityId: string, id: string, type: string, detail?: Record<string, unknown>): LifecycleEvent {
  return { id, entityId, type, time: '2025-01-06T09:00:00Z', ...(detail && { detail }) };
}

/** Load, apply and append one event, as the state machine does (no retry). */
export async function record(store: LifecycleStore, e: LifecycleEvent) {
  const { snapshot, duplicate } = await store.load(e.entityId, e.id);
  if (duplicate) return 'DUPLICATE' as const;
  const before = snapshot ?? initialSnapshot(def);
  return store.append(e.entityId, before.eventCount, applyEvent(def, before, e, config));
}

export function describeLifecycleStore(name: string, store: () => LifecycleStore): void {
  describe(`LifecycleStore conformance: ${name}`, () => {
    it('knows nothing of a new member', async () => {
      const member = freshMember();
      expect(await store().load(member, 'e1')).toEqual({ snapshot: undefined, duplicate: false });
      expect(await store().getEntity(member)).toBeUndefined();
      expect(await store().listEvents(member)).toEqual([]);
    });

    it('appends the trigger and its raised events with the snapshot, and reads them back', async () => {
      const member = freshMember();
      expect(await record(store(), event(member, 'e1', 'agent.message_sent'))).toBe('APPENDED');
      expect(
        await record(
          store(),
          event(member, 'e2', 'member.message_sent', { text: 'hi', score: 0.5, tags: ['a'], nested: { x: null } }),
        ),
      ).toBe('APPENDED');
      expect(await record(store(), event(member, 'e3', 'call.booked'))).toBe('APPENDED'); // raises follow_up.stopped
      const snapshot = await store().getEntity(member);
      expect(snapshot).toEqual({
        state: 'booked',
        context: { followUpsStopped: true },
        version: 4,
        conversation: 1,
        eventCount: 4,
        progress: { matched: [] },
      } satisfies EntitySnapshot);
      const events = await store().listEvents(member);
      expect(events.map((e) => [e.seq, e.id, e.type])).toEqual([
        [1, 'e1', 'agent.message_sent'],
        [2, 'e2', 'member.message_sent'],
        [3, 'e3', 'call.booked'],
        [4, 'e3:follow_up.stopped', 'follow_up.stopped'],
      ]);
      expect(events[1]!.detail).toEqual({ text: 'hi', score: 0.5, tags: ['a'], nested: { x: null } });
      expect(await store().load(member, 'e3')).toEqual({ snapshot, duplicate: true });
    });

    it('keeps seq order past the width of one digit', async () => {
      const member = freshMember();
      for (let i = 1; i <= 12; i++) await record(store(), event(member, `e${i}`, 'link.clicked'));
      expect((await store().listEvents(member)).map((e) => e.seq)).toEqual(Array.from({ length: 13 }, (_, i) => i + 1)); // + follow_up.stopped
    });

    it('refuses an append whose expected eventCount is stale, and writes nothing', async () => {
      const member = freshMember();
      await record(store(), event(member, 'e1', 'agent.message_sent'));
      const stale = applyEvent(def, initialSnapshot(def), event(member, 'e2', 'member.message_sent'), config);
      await expect(store().append(member, 0, stale)).rejects.toBeInstanceOf(VersionConflictError);
      const snapshot = (await store().getEntity(member))!;
      await expect(
        store().append(
          member,
          5,
          applyEvent(def, { ...snapshot, eventCount: 5 }, event(member, 'e3', 'member.message_sent'), config),
        ),
      ).rejects.toBeInstanceOf(VersionConflictError);
      expect((await store().listEvents(member)).map((e) => e.id)).toEqual(['e1']);
      expect(await store().load(member, 'e2')).toMatchObject({ duplicate: false });
    });

    it('lets exactly one of two concurrent first appends win', async () => {
      const member = freshMember();
      const results = await Promise.allSettled(
        ['a', 'b'].map((id) =>
          store().append(
            member,
            0,
            applyEvent(def, initialSnapshot(def), event(member, id, 'agent.message_sent'), config),
          ),
        ),
      );
      expect(
        results.filter((r) => r.status === 'fulfilled').map((r) => (r as PromiseFulfilledResult<string>).value),
      ).toEqual(['APPENDED']);
      expect((results.find((r) => r.status === 'rejected') as PromiseRejectedResult).reason).toBeInstanceOf(
        VersionConflictError,
      );
      expect(await store().listEvents(member)).toHaveLength(1);
    });

    it('reports an already logged trigger id as DUPLICATE and writes nothing', async () => {
      const member = freshMember();
      await record(store(), event(member, 'e1', 'agent.message_sent'));
      await record(store(), event(member, 'e2', 'member.message_sent'));
      const snapshot = (await store().getEntity(member))!;
      // A redelivery of e1 that skipped the read (the race the append guards): a continuing append with e1 as trigger.
      const again = applyEvent(def, snapshot, event(member, 'e1', 'agent.message_sent'), config);
      expect(await store().append(member, snapshot.eventCount, again)).toBe('DUPLICATE');
      expect(await store().getEntity(member)).toEqual(snapshot);
      expect(await store().listEvents(member)).toHaveLength(2);
    });

    it('reports a repeated identical append from another request (a duplicate delivery that read before the first wrote) as DUPLICATE', async () => {
      const member = freshMember();
      const result = applyEvent(def, initialSnapshot(def), event(member, 'e1', 'agent.message_sent'), config);
      expect(await store().append(member, 0, result, 'execution-1')).toBe('APPENDED');
      expect(await store().append(member, 0, result, 'execution-2')).toBe('DUPLICATE');
      expect(await store().append(member, 0, result)).toBe('DUPLICATE');
      expect(await store().listEvents(member)).toHaveLength(1);
      expect((await store().getEntity(member))!.eventCount).toBe(1);
    });

    it('answers the same request again as committed: a Persist retried after its first attempt wrote still publishes', async () => {
      const member = freshMember();
      const result = applyEvent(def, initialSnapshot(def), event(member, 'e1', 'agent.message_sent'), config);
      expect(await store().append(member, 0, result, 'execution-1')).toBe('APPENDED');
      expect(await store().append(member, 0, result, 'execution-1')).toBe('APPENDED');
      expect(await store().listEvents(member)).toHaveLength(1);
      expect((await store().getEntity(member))!.eventCount).toBe(1);
    });

    it('refuses a result that does not continue the log', async () => {
      const member = freshMember();
      const result = applyEvent(def, initialSnapshot(def), event(member, 'e1', 'agent.message_sent'), config);
      await expect(store().append(member, 1, result)).rejects.toThrow(InvalidInputError);
      await expect(store().append(member, 0, { ...result, events: [] })).rejects.toThrow(/no events/);
      await expect(store().append('other', 0, result)).rejects.toThrow(/another entity/);
      await expect(
        store().append(member, 0, { ...result, snapshot: { ...result.snapshot, eventCount: 3 } }),
      ).rejects.toThrow(/eventCount 3/);
      expect(await store().getEntity(member)).toBeUndefined();
    });

    it('lists members sorted by id and every event member by member in seq order', async () => {
      const [a, b] = [freshMember('list-b'), freshMember('list-a')].sort();
      await record(store(), event(b!, 'b1', 'agent.message_sent'));
      await record(store(), event(a!, 'a1', 'member.message_sent'));
      await record(store(), event(b!, 'b2', 'member.message_sent'));
      const listed = (await store().listEntities()).filter((l) => l.entityId === a || l.entityId === b);
      expect(listed.map((l) => [l.entityId, l.snapshot.state])).toEqual([
        [a, 'engaged'],
        [b, 'engaged'],
      ]);
      const all = (await store().listAllEvents()).filter((e) => e.entityId === a || e.entityId === b);
      expect(all.map((e) => e.id)).toEqual(['a1', 'b1', 'b2']);
      const ids = (await store().listEntities()).map((l) => l.entityId);
      expect(ids).toEqual([...ids].sort());
    });
  });
}
