/** The lifecycle's metrics: `Persist` counts applied events, duplicates and version conflicts; `LoadLead` counts duplicates it reads. */
import { describe, expect, it } from 'vitest';
import { VersionConflictError } from '../../lambdas/lib/errors.ts';
import { createHandler as loadLeadHandler } from '../../lambdas/lifecycle/handlers/load-lead.ts';
import { createHandler as persistHandler } from '../../lambdas/lifecycle/handlers/persist.ts';
import { loadLifecycle } from '../../lambdas/lifecycle/loader.ts';
import { memoryLifecycleStore } from '../../lambdas/lifecycle/store.ts';
import { applyEvent, initialSnapshot } from '../../lambdas/lifecycle/transition.ts';
import { useEmfCapture, dimensionsOf, valuesOf } from './emf.ts';

const ENV = { POWERTOOLS_SERVICE_NAME: 'lead-lifecycle', POWERTOOLS_METRICS_DISABLED: 'false' };
const LEAD = 'lead-7731';
const def = loadLifecycle('lead-lifecycle');

/** What `ApplyEvent` hands to `Persist` for the lead's first event. */
function persistInput(eventId: string) {
  const event = { id: eventId, leadId: LEAD, type: 'lead.message_sent', time: '2026-01-06T09:00:00Z' };
  const { snapshot, events } = applyEvent(def, initialSnapshot(def), event, { goal: null, stopFollowUpsOn: [] });
  return { leadId: LEAD, expectedEventCount: 0, snapshot, events };
}

const emf = useEmfCapture();

describe('lifecycle metrics', () => {
  it('Persist: one line per invocation - applied, duplicate, version conflict (the error still reaches the state machine)', async () => {
    const persist = persistHandler(ENV, { store: memoryLifecycleStore() });
    expect(await persist(persistInput('evt-1'))).toEqual({ status: 'APPENDED' });
    expect(await persist(persistInput('evt-1'))).toEqual({ status: 'DUPLICATE' });
    await expect(persist(persistInput('evt-2'))).rejects.toBeInstanceOf(VersionConflictError);

    const lines = emf.lines();
    expect(lines.map(valuesOf)).toEqual([{ LeadEventApplied: 1 }, { LeadDuplicateEvent: 1 }, { LeadVersionConflict: 1 }]);
    expect(lines.map(dimensionsOf)).toEqual(Array(3).fill({ service: 'lead-lifecycle' }));
    expect(JSON.stringify(lines)).not.toContain(LEAD);
  });

  it('LoadLead: counts a redelivered event, and nothing for a new one', async () => {
    const store = memoryLifecycleStore();
    await store.append(LEAD, 0, persistInput('evt-1'));
    const load = loadLeadHandler(ENV, { store });
    const envelope = (eventId: string) => ({
      id: `eb-${eventId}`,
      'detail-type': 'agent.message_sent',
      source: 'stepwise.agent',
      time: '2026-01-06T10:00:00Z',
      detail: { leadId: LEAD, eventId },
    });
    expect((await load({ envelope: envelope('evt-1'), attempt: 0 })).duplicate).toBe(true);
    expect((await load({ envelope: envelope('evt-2'), attempt: 0 })).duplicate).toBe(false);

    expect(emf.lines().map(valuesOf)).toEqual([{ LeadDuplicateEvent: 1 }]);
    expect(emf.other()).toEqual([]);
  });
});
