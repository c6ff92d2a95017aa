/**
 * The lifecycle's metrics: `Persist` counts applied events, duplicates and version conflicts; the load Task counts
 * duplicates it reads.
 */
import { describe, expect, it } from 'vitest';
import { VersionConflictError } from '../../../src/core/errors.ts';
import { createHandler as loadHandler } from '../../../src/runtime/lifecycle/handlers/load-entity.ts';
import { createHandler as persistHandler } from '../../../src/runtime/lifecycle/handlers/persist.ts';
import { memoryLifecycleStore } from '../../../src/runtime/lifecycle/store.ts';
import { applyEvent, initialSnapshot } from '../../../src/runtime/lifecycle/transition.ts';
import { def } from '../lifecycle/support.ts';
import { dimensionsOf, useEmfCapture, valuesOf } from './emf.ts';

const ENV = {
  LIFECYCLE: def.name,
  POWERTOOLS_SERVICE_NAME: def.name,
  POWERTOOLS_METRICS_DISABLED: 'false',
};
const MEMBER = 'member-7731';

/** What `ApplyEvent` hands to `Persist` for the member's first event. */
function persistInput(eventId: string) {
  const event = { id: eventId, entityId: MEMBER, type: 'member.message_sent', time: '2026-01-06T09:00:00Z' };
  const { snapshot, events } = applyEvent(def, initialSnapshot(def), event, { goal: null, stopFollowUpsOn: [] });
  const envelope = {
    id: `eb-${eventId}`,
    'detail-type': event.type,
    source: 'stepwise.crm',
    time: event.time,
    detail: { memberId: MEMBER, eventId },
  };
  return { envelope, expectedEventCount: 0, snapshot, events };
}

const emf = useEmfCapture();

describe('lifecycle metrics', () => {
  it('Persist: one line per invocation - applied, duplicate, version conflict (the error still reaches the state machine)', async () => {
    const persist = persistHandler(ENV, { store: memoryLifecycleStore() });
    expect(await persist(persistInput('evt-1'))).toEqual({ status: 'APPENDED' });
    expect(await persist(persistInput('evt-1'))).toEqual({ status: 'DUPLICATE' });
    await expect(persist(persistInput('evt-2'))).rejects.toBeInstanceOf(VersionConflictError);

    const lines = emf.lines();
    expect(lines.map(valuesOf)).toEqual([{ EventApplied: 1 }, { DuplicateEvent: 1 }, { VersionConflict: 1 }]);
    expect(lines.map(dimensionsOf)).toEqual(Array(3).fill({ service: 'member-journey' }));
    expect(JSON.stringify(lines)).not.toContain(MEMBER);
  });

  it('the load Task: counts a redelivered event, and nothing for a new one', async () => {
    const store = memoryLifecycleStore();
    await store.append(MEMBER, 0, persistInput('evt-1'));
    const load = loadHandler(ENV, { store });
    const envelope = (eventId: string) => ({
      id: `eb-${eventId}`,
      'detail-type': 'agent.message_sent',
      source: 'stepwise.agent',
      time: '2026-01-06T10:00:00Z',
      detail: { memberId: MEMBER, eventId },
    });
    expect((await load(envelope('evt-1'))).duplicate).toBe(true);
    expect((await load(envelope('evt-2'))).duplicate).toBe(false);

    expect(emf.lines().map(valuesOf)).toEqual([{ DuplicateEvent: 1 }]);
    expect(emf.other()).toEqual([]);
  });
});
