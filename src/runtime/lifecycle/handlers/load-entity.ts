/**
 * Lifecycle Task `Load <entity>`: turns the EventBridge envelope into a lifecycle event and reads
 * the entity's snapshot (a new entity starts in the initial state) and whether the event was
 * applied already (metric `DuplicateEvent`). Its input is the state: the envelope, with the
 * results of an earlier pass beside it after a version conflict; then it first waits a jittered
 * backoff. An envelope over `MAX_EVENT_BYTES` is refused (`EventTooLargeError`) before anything
 * else: the state machine could not carry it to the end.
 */
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import * as z from 'zod';
import type { Env } from '../../../core/env.ts';
import { EventTooLargeError } from '../../../core/errors.ts';
import { lazy } from '../../../core/lazy.ts';
import type { EntitySnapshot, LifecycleEvent } from '../../../definitions/lifecycle/schema.ts';
import { observability } from '../../observability.ts';
import { payloadBytes } from '../../offload.ts';
import { eventFromEnvelope, MAX_EVENT_BYTES } from '../envelope.ts';
import { conflictBackoffMs, lifecycleStoreFromEnv, sleep } from '../store.ts';
import { initialSnapshot } from '../transition.ts';
import { type LifecycleServices, lifecycleFromEnv, parseInput } from './services.ts';

/** What the state machine adds beside the envelope's fields; the rest of the input is the envelope. */
const PassResults = z.looseObject({
  /** The previous pass, after a version conflict. */
  loaded: z.looseObject({ attempt: z.number().int().nonnegative() }).optional(),
});

export interface LoadEntityOutput {
  /** The event without its detail (the state has it once, in the envelope). */
  event: Omit<LifecycleEvent, 'detail'>;
  entity: EntitySnapshot;
  /** The event id is already in the entity's log: nothing is applied. */
  duplicate: boolean;
  /** Re-reads so far after version conflicts (0 on the first pass). */
  attempt: number;
}

export function createHandler(env: Env, services: LifecycleServices = {}) {
  const def = lazy(() => lifecycleFromEnv(env));
  const { tracer, metrics, instrument } = observability(env, env.LIFECYCLE ?? 'lifecycle');
  const store = lazy(() => services.store ?? lifecycleStoreFromEnv(env, tracer));
  return instrument(async (input: unknown): Promise<LoadEntityOutput> => {
    const { loaded, applied: _a, persisted: _p, error: _e, ...envelope } = parseInput(PassResults, input, 'Load input');
    const bytes = payloadBytes(envelope);
    if (bytes > MAX_EVENT_BYTES) {
      const { id, source, 'detail-type': type } = envelope as Record<string, unknown>;
      throw new EventTooLargeError(
        `event ${String(id)} (${String(type)} from ${String(source)}) is ${bytes} bytes; a lifecycle applies events of at most ${MAX_EVENT_BYTES}`,
      );
    }
    const { detail: _detail, ...event } = eventFromEnvelope(def(), envelope);
    const attempt = loaded ? loaded.attempt + 1 : 0;
    if (attempt > 0) await (services.sleep ?? sleep)(conflictBackoffMs(attempt, services.random));
    const { snapshot, duplicate } = await store().load(event.entityId, event.id);
    if (duplicate) metrics.addMetric('DuplicateEvent', MetricUnit.Count, 1);
    return { event, entity: snapshot ?? initialSnapshot(def()), duplicate, attempt };
  });
}

export const handler = createHandler(process.env);
