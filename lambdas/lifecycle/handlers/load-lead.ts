/**
 * Lifecycle Task `LoadLead`: turns the EventBridge envelope into a lifecycle event and reads the
 * lead's snapshot (a new lead starts in the initial state) and whether the event was applied
 * already. After a version conflict (`attempt` > 0) it first waits a jittered backoff.
 */
import { z } from 'zod';
import type { Env } from '../../lib/contracts.ts';
import { eventFromEnvelope } from '../envelope.ts';
import type { LeadSnapshot, LifecycleEvent } from '../schema.ts';
import { conflictBackoffMs, leadStoreFromEnv } from '../store.ts';
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

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export function createHandler(env: Env, services: LifecycleServices = {}) {
  const store = lazy(() => services.store ?? leadStoreFromEnv(env));
  const def = lazy(() => lifecycleFromEnv(env));
  return async (input: unknown): Promise<LoadLeadOutput> => {
    const { envelope, attempt } = parseInput(LoadLeadInput, input, 'LoadLead input');
    const event = eventFromEnvelope(envelope);
    if (attempt > 0) await (services.sleep ?? sleep)(conflictBackoffMs(attempt, services.random));
    const { snapshot, duplicate } = await store().load(event.leadId, event.id);
    return { event, lead: snapshot ?? initialSnapshot(def()), duplicate };
  };
}

export const handler = createHandler(process.env);
