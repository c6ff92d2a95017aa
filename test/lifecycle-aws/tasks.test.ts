/** The lifecycle state machine's Task handlers, on the in-memory store. */
import { describe, expect, it } from 'vitest';
import { InvalidInputError, RouteMismatchError, VersionConflictError } from '../../lambdas/lib/errors.ts';
import { createHandler as applyHandler, type ApplyEventOutput } from '../../lambdas/lifecycle/handlers/apply-event.ts';
import { createHandler as loadHandler } from '../../lambdas/lifecycle/handlers/load-lead.ts';
import { createHandler as persistHandler } from '../../lambdas/lifecycle/handlers/persist.ts';
import { loadAgentConfig, loadLifecycle } from '../../lambdas/lifecycle/loader.ts';
import { LOG_ONLY, routeOf } from '../../lambdas/lifecycle/routes.ts';
import { memoryLeadStore } from '../../lambdas/lifecycle/store.ts';
import { initialSnapshot } from '../../lambdas/lifecycle/transition.ts';

const def = loadLifecycle();
const env = { AGENT_CONFIG: JSON.stringify(loadAgentConfig('book-meeting')) };
const envelope = (eventId: string, type: string, detail: Record<string, unknown> = {}) => ({
  id: `eb-${eventId}`,
  'detail-type': type,
  source: 'stepwise.crm',
  time: '2025-01-06T09:00:00Z',
  detail: { leadId: 'lead-1', eventId, ...detail },
});

describe('routeOf', () => {
  it('names the Task after the declaring state, the machine level after the lifecycle, and LogOnly when nothing handles the event', () => {
    expect(routeOf(def, 'engaged', 'meeting.booked')).toBe('lead_qualification: meeting.booked');
    expect(routeOf(def, 'cold', 'lead.message_sent')).toBe('cold: lead.message_sent');
    expect(routeOf(def, 'renewal_due', 'goal.hit')).toBe('active: goal.hit');
    expect(routeOf(def, 'goal_hit', 'crm.state_set')).toBe('lead-lifecycle: crm.state_set');
    expect(routeOf(def, 'deal_closed', 'payment.initiated')).toBe(LOG_ONLY); // null override
    expect(routeOf(def, 'opted_out', 'lead.opted_out')).toBe(LOG_ONLY); // goto to itself
    expect(routeOf(def, 'idle', 'lead.sneezed')).toBe(LOG_ONLY);
  });
});

describe('LoadLead, the transition Task and Persist', () => {
  it('load a new lead in the initial state, apply, persist, and then see the event as a duplicate', async () => {
    const store = memoryLeadStore();
    const load = loadHandler({}, { store });
    const apply = applyHandler(env);
    const persist = persistHandler({}, { store });

    const loaded = await load({ envelope: envelope('e1', 'agent.message_sent', { channel: 'sms' }), attempt: 0 });
    expect(loaded).toEqual({
      event: { id: 'e1', leadId: 'lead-1', type: 'agent.message_sent', time: '2025-01-06T09:00:00Z', detail: { channel: 'sms' } },
      lead: initialSnapshot(def),
      duplicate: false,
    });
    const applied: ApplyEventOutput = await apply({ route: 'idle: agent.message_sent', event: loaded.event, lead: loaded.lead });
    expect(applied.snapshot).toMatchObject({ state: 'outreach', version: 1, eventCount: 1 });
    expect(applied.stateChanged).toMatchObject({ from: 'idle', to: 'outreach', canReceiveFollowUp: true });
    expect(await persist({ leadId: 'lead-1', expectedEventCount: 0, snapshot: applied.snapshot, events: applied.events })).toEqual({ status: 'APPENDED' });
    expect(await load({ envelope: envelope('e1', 'agent.message_sent'), attempt: 0 })).toMatchObject({ duplicate: true, lead: { state: 'outreach' } });
    await expect(persist({ leadId: 'lead-1', expectedEventCount: 0, snapshot: applied.snapshot, events: applied.events })).resolves.toEqual({ status: 'DUPLICATE' });
  });

  it('returns no state change for an event that is only logged', async () => {
    const apply = applyHandler(env);
    const lead = { ...initialSnapshot(def), state: 'outreach', version: 1, eventCount: 1 };
    const applied = await apply({ route: LOG_ONLY, event: { id: 'e2', leadId: 'lead-1', type: 'agent.message_sent', time: '2025-01-06T09:00:00Z' }, lead });
    expect(applied).toMatchObject({ snapshot: { state: 'outreach', version: 1, eventCount: 2 }, stateChanged: null });
  });

  it('refuses a route the statechart does not resolve for the lead state', async () => {
    const apply = applyHandler(env);
    const event = { id: 'e1', leadId: 'lead-1', type: 'meeting.booked', time: '2025-01-06T09:00:00Z' };
    await expect(apply({ route: 'engaged: meeting.booked', event, lead: { ...initialSnapshot(def), state: 'engaged' } })).rejects.toThrow(
      new RouteMismatchError('meeting.booked in engaged was routed to "engaged: meeting.booked", the statechart says "lead_qualification: meeting.booked"'),
    );
    await expect(apply({ route: LOG_ONLY, event, lead: { ...initialSnapshot(def), state: 'engaged' } })).rejects.toThrow(RouteMismatchError);
  });

  it('Persist throws VersionConflictError when someone appended first', async () => {
    const store = memoryLeadStore();
    const apply = applyHandler(env);
    const persist = persistHandler({}, { store });
    const first = await apply({ route: 'idle: agent.message_sent', event: { id: 'a', leadId: 'lead-1', type: 'agent.message_sent', time: '2025-01-06T09:00:00Z' }, lead: initialSnapshot(def) });
    const second = await apply({ route: 'idle: lead.message_sent', event: { id: 'b', leadId: 'lead-1', type: 'lead.message_sent', time: '2025-01-06T09:00:00Z' }, lead: initialSnapshot(def) });
    await persist({ leadId: 'lead-1', expectedEventCount: 0, ...first });
    await expect(persist({ leadId: 'lead-1', expectedEventCount: 0, ...second })).rejects.toBeInstanceOf(VersionConflictError);
  });

  it('LoadLead waits a jittered backoff before a re-read after a conflict, and not before the first read', async () => {
    const waits: number[] = [];
    const load = loadHandler({}, { store: memoryLeadStore(), sleep: async (ms) => void waits.push(ms), random: () => 0.5 });
    await load({ envelope: envelope('e1', 'agent.message_sent'), attempt: 0 });
    await load({ envelope: envelope('e1', 'agent.message_sent'), attempt: 3 });
    expect(waits).toEqual([100]);
  });

  it('refuse input that cannot be processed, and need their environment only when invoked', async () => {
    const load = loadHandler({}, { store: memoryLeadStore() });
    await expect(load({ envelope: { id: 'x' }, attempt: 0 })).rejects.toThrow(InvalidInputError);
    await expect(load({ envelope: envelope('e1', 'agent.message_sent') })).rejects.toThrow(/LoadLead input: attempt/);
    await expect(loadHandler({})({ envelope: envelope('e1', 'agent.message_sent'), attempt: 0 })).rejects.toThrow('LEADS_TABLE is not set');
    const event = { id: 'e1', leadId: 'lead-1', type: 'agent.message_sent', time: '2025-01-06T09:00:00Z' };
    await expect(applyHandler({})({ route: 'idle: agent.message_sent', event, lead: initialSnapshot(def) })).rejects.toThrow('AGENT_CONFIG');
    await expect(applyHandler({ AGENT_CONFIG: '{"goal":{"event":"goal.hit"}}' })({ route: 'idle: agent.message_sent', event, lead: initialSnapshot(def) })).rejects.toThrow(
      /AGENT_CONFIG: goal/,
    );
  });
});
