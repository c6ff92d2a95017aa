/**
 * Read-side queries over the event store, for the CLI and reports: an entity's status and history,
 * every entity's status, and the statechart's reports over every logged event.
 */

import type { AgentConfig } from '../../definitions/lifecycle/agent-config.ts';
import type { LifecycleDefinition, LoggedEvent } from '../../definitions/lifecycle/schema.ts';
import { buildReport, type Report } from './reporting.ts';
import type { LifecycleStore } from './store.ts';
import { type EntityStatus, entityStatus } from './transition.ts';

/** An entity as `stepwise lifecycle <name> show` prints it. */
export interface EntityHistory extends EntityStatus {
  entityId: string;
  /** The entity's log in `seq` order, system-raised events included. */
  events: LoggedEvent[];
}

/** An entity's status and log; `undefined` for an entity with no event. */
export async function entityHistory(
  store: LifecycleStore,
  def: LifecycleDefinition,
  entityId: string,
): Promise<EntityHistory | undefined> {
  const [snapshot, events] = await Promise.all([store.getEntity(entityId), store.listEvents(entityId)]);
  return snapshot && { entityId, ...entityStatus(def, snapshot), events };
}

/** Every entity's status by id (sorted), or only those of `entityIds` that have events. */
export async function entityStatuses(
  store: LifecycleStore,
  def: LifecycleDefinition,
  entityIds?: readonly string[],
): Promise<Record<string, EntityStatus>> {
  const entities = await store.listEntities();
  const wanted = entityIds && new Set(entityIds);
  return Object.fromEntries(
    entities.filter((l) => !wanted || wanted.has(l.entityId)).map((l) => [l.entityId, entityStatus(def, l.snapshot)]),
  );
}

/**
 * The lifecycle's report (counts, states, the statechart's `reports`) over every entity's log; with
 * `agent`, also that agent's goal rate and its own reports.
 */
export async function lifecycleReport(
  store: LifecycleStore,
  def: LifecycleDefinition,
  agent?: { name: string; config: AgentConfig },
): Promise<Report> {
  return buildReport(def, await store.listAllEvents(), agent);
}
