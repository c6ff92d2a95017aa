/** The lifecycle state machine's Task handlers, on the in-memory store. */
import { describe, expect, it } from 'vitest';
import {
  EventTooLargeError,
  InvalidInputError,
  RouteMismatchError,
  VersionConflictError,
} from '../../../src/core/errors.ts';
import { describeTransitions, routeOf, UNKNOWN_EVENT } from '../../../src/definitions/lifecycle/routes.ts';
import { MAX_EVENT_BYTES } from '../../../src/runtime/lifecycle/envelope.ts';
import {
  type ApplyEventOutput,
  createHandler as applyHandler,
} from '../../../src/runtime/lifecycle/handlers/apply-event.ts';
import { createHandler as loadHandler } from '../../../src/runtime/lifecycle/handlers/load-entity.ts';
import { createHandler as persistHandler } from '../../../src/runtime/lifecycle/handlers/persist.ts';
import { memoryLifecycleStore } from '../../../src/runtime/lifecycle/store.ts';
import { initialSnapshot } from '../../../src/runtime/lifecycle/transition.ts';
import { agent, def } from './support.ts';

const env = { LIFECYCLE: def.name, AGENT_CONFIG: JSON.stringify(agent('attend-call')) };
const envelope = (eventId: string, type: string, detail: Record<string, unknown> = {}) => ({
  id: `eb-${eventId}`,
  'detail-type': type,
  source: 'stepwise.crm',
  time: '2025-01-06T09:00:00Z',
  detail: { memberId: 'member-1', eventId, ...detail },
});

describe('routeOf', () => {
  it('names the Task after the event type, and Unknown event for a type outside the vocabulary', () => {
    expect(routeOf(def, 'call.booked')).toBe('call.booked');
    expect(routeOf(def, 'link.clicked')).toBe('link.clicked'); // known, handled nowhere: logged there
    expect(routeOf(def, 'member.sneezed')).toBe(UNKNOWN_EVENT);
    expect(routeOf(def, 'constructor')).toBe(UNKNOWN_EVENT);
  });

  it("describes what an event does in each state, for the Task's Comment", () => {
    expect(describeTransitions(def, 'call.missed')).toBe('booked → no_show; elsewhere logged only');
    expect(describeTransitions(def, 'goal.hit')).toBe('every non-terminal state → goal_hit; elsewhere logged only');
    expect(describeTransitions(def, 'crm.state_set')).toBe('every state → the leaf named by detail.state');
    expect(describeTransitions(def, 'agent.message_sent')).toBe(
      'idle, renewal_due → outreach; goal_hit, stopped → next conversation, outreach; elsewhere logged only',
    );
    expect(describeTransitions(def, 'link.clicked')).toBe('logged only in every state');
  });
});

describe('the load Task, the transition Task and Persist', () => {
  it('load a new member in the initial state, apply, persist, and then see the event as a duplicate', async () => {
    const store = memoryLifecycleStore();
    const load = loadHandler(env, { store });
    const apply = applyHandler(env);
    const persist = persistHandler(env, { store });

    const first = envelope('e1', 'agent.message_sent', { channel: 'sms' });
    const loaded = await load(first);
    expect(loaded).toEqual({
      event: { id: 'e1', entityId: 'member-1', type: 'agent.message_sent', time: '2025-01-06T09:00:00Z' },
      entity: initialSnapshot(def),
      duplicate: false,
      attempt: 0,
    });
    const applied: ApplyEventOutput = await apply({
      route: 'agent.message_sent',
      envelope: first,
      entity: loaded.entity,
    });
    expect(applied.snapshot).toMatchObject({ state: 'outreach', version: 1, eventCount: 1 });
    expect(applied.stateChanged).toMatchObject({ from: 'idle', to: 'outreach', canReceiveFollowUp: true });
    // The state holds the event once: the trigger comes back without its detail, and Persist takes it from the envelope.
    expect(applied.events[0]!.detail).toBeUndefined();
    expect(
      await persist({ envelope: first, expectedEventCount: 0, snapshot: applied.snapshot, events: applied.events }),
    ).toEqual({ status: 'APPENDED' });
    expect((await store.listEvents('member-1'))[0]!.detail).toEqual({ channel: 'sms' });
    expect(await load(envelope('e1', 'agent.message_sent'))).toMatchObject({
      duplicate: true,
      entity: { state: 'outreach' },
    });
    await expect(
      persist({ envelope: first, expectedEventCount: 0, snapshot: applied.snapshot, events: applied.events }),
    ).resolves.toEqual({ status: 'DUPLICATE' });
  });

  it('returns no state change for an event that is only logged', async () => {
    const apply = applyHandler(env);
    const entity = { ...initialSnapshot(def), state: 'outreach', version: 1, eventCount: 1 };
    const applied = await apply({
      route: 'agent.message_sent',
      envelope: envelope('e2', 'agent.message_sent'),
      entity,
    });
    expect(applied).toMatchObject({ snapshot: { state: 'outreach', version: 1, eventCount: 2 }, stateChanged: null });
  });

  it('refuses a route that is not the one the statechart gives the event', async () => {
    const apply = applyHandler(env);
    const booked = envelope('e1', 'call.booked');
    await expect(
      apply({ route: 'call.missed', envelope: booked, entity: { ...initialSnapshot(def), state: 'engaged' } }),
    ).rejects.toThrow(
      new RouteMismatchError('call.booked was routed to "call.missed", the statechart says "call.booked"'),
    );
    await expect(apply({ route: UNKNOWN_EVENT, envelope: booked, entity: initialSnapshot(def) })).rejects.toThrow(
      RouteMismatchError,
    );
  });

  it('Persist throws VersionConflictError when someone appended first', async () => {
    const store = memoryLifecycleStore();
    const apply = applyHandler(env);
    const persist = persistHandler(env, { store });
    const [a, b] = [envelope('a', 'agent.message_sent'), envelope('b', 'member.message_sent')];
    const first = await apply({ route: 'agent.message_sent', envelope: a, entity: initialSnapshot(def) });
    const second = await apply({ route: 'member.message_sent', envelope: b, entity: initialSnapshot(def) });
    await persist({ envelope: a, expectedEventCount: 0, ...first });
    await expect(persist({ envelope: b, expectedEventCount: 0, ...second })).rejects.toBeInstanceOf(
      VersionConflictError,
    );
  });

  it('the load Task waits a jittered backoff before a re-read after a conflict, and not before the first read', async () => {
    const waits: number[] = [];
    const load = loadHandler(env, {
      store: memoryLifecycleStore(),
      sleep: async (ms) => void waits.push(ms),
      random: () => 0.5,
    });
    const first = await load(envelope('e1', 'agent.message_sent'));
    expect(first.attempt).toBe(0);
    // After a conflict the state holds the previous pass beside the envelope.
    const again = await load({
      ...envelope('e1', 'agent.message_sent'),
      loaded: { ...first, attempt: 2 },
      error: { Error: 'VersionConflictError' },
    });
    expect(again.attempt).toBe(3);
    expect(waits).toEqual([100]);
  });

  it('refuses an event larger than a state can carry, before reading anything', async () => {
    const load = loadHandler(env, { store: memoryLifecycleStore() });
    const fits = envelope('big', 'member.message_sent', { text: 'x'.repeat(MAX_EVENT_BYTES - 300) });
    await expect(load(fits)).resolves.toMatchObject({ duplicate: false });
    const over = envelope('big', 'member.message_sent', { text: 'x'.repeat(MAX_EVENT_BYTES) });
    await expect(load(over)).rejects.toThrow(EventTooLargeError);
    await expect(load(over)).rejects.toThrow(
      /event eb-big \(member.message_sent from stepwise.crm\) is \d+ bytes; a lifecycle applies events of at most 245760/,
    );
  });

  it('refuse input that cannot be processed, and need their environment only when invoked', async () => {
    const load = loadHandler(env, { store: memoryLifecycleStore() });
    await expect(load({ id: 'x' })).rejects.toThrow(InvalidInputError);
    await expect(load({ ...envelope('e1', 'agent.message_sent'), detail: { eventId: 'e1' } })).rejects.toThrow(
      /detail\.memberId: missing: the event names no member/,
    );
    await expect(loadHandler({ LIFECYCLE: def.name })(envelope('e1', 'agent.message_sent'))).rejects.toThrow(
      'LIFECYCLE_TABLE is not set',
    );
    await expect(
      loadHandler({}, { store: memoryLifecycleStore() })(envelope('e1', 'agent.message_sent')),
    ).rejects.toThrow('LIFECYCLE');
    const input = {
      route: 'agent.message_sent',
      envelope: envelope('e1', 'agent.message_sent'),
      entity: initialSnapshot(def),
    };
    await expect(applyHandler({ LIFECYCLE: def.name })(input)).rejects.toThrow('AGENT_CONFIG');
    await expect(
      applyHandler({ LIFECYCLE: def.name, AGENT_CONFIG: '{"goal":{"event":"goal.hit"}}' })(input),
    ).rejects.toThrow(/AGENT_CONFIG: goal/);
  });
});
