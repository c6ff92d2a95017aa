/**
 * Lifecycle Task `LoadLead`: turns the EventBridge envelope into a lifecycle event and reads the
 * lead's snapshot (a new lead starts in the initial state) and whether the event was applied
 * already (metric `LeadDuplicateEvent`). After a version conflict (`attempt` > 0) it first waits a
 * jittered backoff.
 */
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import * as z from 'zod';
import type { Env } from '../../lib/contracts.ts';
import { observability } from '../../lib/observability.ts';
import { eventFromEnvelope } from '../envelope.ts';
import type { LeadSnapshot, LifecycleEvent } from '../schema.ts';
import { conflictBackoffMs, leadStoreFromEnv, sleep } from '../store.ts';
import { initialSnapshot } from '../transition.ts';
import { lazy, lifecycleFromEnv, parseInput, type LifecycleServices } from './services.ts';

const LoadLeadInput = z.object({
  /** The EventBridge event the state machine was started with. */
  envelope: z.unknown(),
  /** Re-reads so far after version conflicts. */
  attempt: z.number().int().nonnegative(),
});
export type LoadLeadInput = z.infer<typeof LoadLeadInput>;

export interface LoadLeadOutput {
  event: LifecycleEvent;
  lead: LeadSnapshot;
  /** The event id is already in the lead's log: nothing is applied. */
  duplicate: boolean;
}


export function createHandler(env: Env, services: LifecycleServices = {}) {
  const { tracer, metrics, instrument } = observability(env, 'lead-lifecycle');
  const store = lazy(() => services.store ?? leadStoreFromEnv(env, tracer));
  const def = lazy(() => lifecycleFromEnv(env));
  return instrument(async (input: unknown): Promise<LoadLeadOutput> => {
    const { envelope, attempt } = parseInput(LoadLeadInput, input, 'LoadLead input');
    const event = eventFromEnvelope(envelope);
    if (attempt > 0) await (services.sleep ?? sleep)(conflictBackoffMs(attempt, services.random));
    const { snapshot, duplicate } = await store().load(event.leadId, event.id);
    if (duplicate) metrics.addMetric('LeadDuplicateEvent', MetricUnit.Count, 1);
    return { event, lead: snapshot ?? initialSnapshot(def()), duplicate };
  });
}

export const handler = createHandler(process.env);
