/**
 * Lifecycle Task `Persist`: appends the applied events (the trigger's detail taken from the
 * envelope again), the new snapshot and (when state or context changed) the state change's outbox
 * item in one conditional write; the table's stream publishes the change. A `VersionConflictError`
 * sends the state machine back to the load Task. Metrics, one per invocation: `EventApplied`,
 * `DuplicateEvent` (a redelivery that raced the first one past the load) or `VersionConflict`.
 */
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import * as z from 'zod';
import type { Env } from '../../../core/env.ts';
import { VersionConflictError } from '../../../core/errors.ts';
import { lazy } from '../../../core/lazy.ts';
import { EntitySnapshotSchema, LoggedEventSchema } from '../../../definitions/lifecycle/schema.ts';
import { observability } from '../../observability.ts';
import { eventFromEnvelope } from '../envelope.ts';
import { StateChangedDetailSchema } from '../state-changes.ts';
import { type AppendStatus, lifecycleStoreFromEnv } from '../store.ts';
import { type LifecycleServices, lifecycleFromEnv, parseInput } from './services.ts';

const PersistInput = z.object({
  /** The EventBridge event (`$$.Execution.Input`): the entity id and the trigger's detail. */
  envelope: z.unknown(),
  /** The `eventCount` the snapshot was loaded with. */
  expectedEventCount: z.number().int().nonnegative(),
  snapshot: EntitySnapshotSchema,
  /** The applied events, the trigger first (without its detail). */
  events: z.array(LoggedEventSchema).min(1),
  /** The change to publish through the outbox; `null` when state and context did not change. */
  stateChanged: StateChangedDetailSchema.nullable().default(null),
  /** The execution id: a retry of this Persist is the same request (see `LifecycleStore.append`). */
  requestId: z.string().min(1).optional(),
});

const STATUS_METRIC: Record<AppendStatus, string> = { APPENDED: 'EventApplied', DUPLICATE: 'DuplicateEvent' };

export function createHandler(env: Env, services: LifecycleServices = {}) {
  const def = lazy(() => lifecycleFromEnv(env));
  const { tracer, metrics, instrument } = observability(env, env.LIFECYCLE ?? 'lifecycle');
  const store = lazy(() => services.store ?? lifecycleStoreFromEnv(env, tracer));
  return instrument(async (input: unknown): Promise<{ status: AppendStatus }> => {
    const { envelope, expectedEventCount, snapshot, events, stateChanged, requestId } = parseInput(
      PersistInput,
      input,
      'Persist input',
    );
    const trigger = eventFromEnvelope(def(), envelope);
    const [first, ...raised] = events;
    const logged = [
      { ...first!, ...(first!.id === trigger.id && trigger.detail && { detail: trigger.detail }) },
      ...raised,
    ];
    try {
      const status = await store().append(
        trigger.entityId,
        expectedEventCount,
        { snapshot, events: logged, stateChanged },
        requestId,
      );
      metrics.addMetric(STATUS_METRIC[status], MetricUnit.Count, 1);
      return { status };
    } catch (e) {
      if (e instanceof VersionConflictError) metrics.addMetric('VersionConflict', MetricUnit.Count, 1);
      throw e;
    }
  });
}

export const handler = createHandler(process.env);
