/** Shared by the lifecycle tests: the shipped definition and a scripted lead. */
import type { AgentConfig } from '../../../src/definitions/lifecycle/agent-config.ts';
import { loadLifecycle } from '../../../src/definitions/lifecycle/loader.ts';
import type { EntitySnapshot, LifecycleEvent, LoggedEvent } from '../../../src/definitions/lifecycle/schema.ts';
import { applyEvent, initialSnapshot } from '../../../src/runtime/lifecycle/transition.ts';

export const def = loadLifecycle('lead-lifecycle');

export const NO_GOAL: AgentConfig = { goal: null, stopFollowUpsOn: [] };

const T0 = Date.parse('2025-01-06T09:00:00Z');
const HOUR = 3_600_000;

/**
 * A lead driven through `applyEvent` the way the event store will: each call appends the logged
 * events and keeps the snapshot. Event n gets id `<lead>-e<n>` and time T0 + n hours unless `at` is given.
 */
export function scriptedLead(config: AgentConfig, entityId = 'lead-1', start: EntitySnapshot = initialSnapshot(def)) {
  let snapshot = start;
  const log: LoggedEvent[] = [];
  let n = 0;
  return {
    send(type: string, detail?: Record<string, unknown>, at?: string): LoggedEvent[] {
      n += 1;
      const event: LifecycleEvent = {
        id: `${entityId}-e${n}`,
        entityId,
        type,
        time: at ?? new Date(T0 + n * HOUR).toISOString(),
        ...(detail && { detail }),
      };
      const r = applyEvent(def, snapshot, event, config);
      snapshot = r.snapshot;
      log.push(...r.events);
      return r.events;
    },
    get snapshot(): EntitySnapshot {
      return snapshot;
    },
    log,
    /** `type` of every logged event, for sequence assertions. */
    types: () => log.map((e) => e.type),
  };
}
