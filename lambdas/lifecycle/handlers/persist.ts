/**
 * Lifecycle Task `Persist`: appends the applied events, the new snapshot and (when state or
 * context changed) the `lead.state_changed` outbox item in one conditional write; the table's
 * stream publishes the change. A `VersionConflictError` sends the state machine back to `LoadLead`. Metrics, one per
 * invocation: `LeadEventApplied`, `LeadDuplicateEvent` (a redelivery that raced the first one
 * past `LoadLead`) or `LeadVersionConflict`.
 */
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import * as z from 'zod';
import type { Env } from '../../lib/contracts.ts';
import { VersionConflictError } from '../../lib/errors.ts';
import { observability } from '../../lib/observability.ts';
import { LeadSnapshotSchema, LoggedEventSchema } from '../schema.ts';
import { StateChangedDetailSchema } from '../state-changes.ts';
import { leadStoreFromEnv, type AppendStatus } from '../store.ts';
import { lazy, parseInput, type LifecycleServices } from './services.ts';

const PersistInput = z.object({
  leadId: z.string().min(1),
  /** The `eventCount` the snapshot was loaded with. */
  expectedEventCount: z.number().int().nonnegative(),
  snapshot: LeadSnapshotSchema,
  events: z.array(LoggedEventSchema).min(1),
  /** The change to publish through the outbox; `null` when state and context did not change. */
  stateChanged: StateChangedDetailSchema.nullable().default(null),
  /** The execution id: a retry of this Persist is the same request (see `LeadStore.append`). */
  requestId: z.string().min(1).optional(),
});

const STATUS_METRIC: Record<AppendStatus, string> = { APPENDED: 'LeadEventApplied', DUPLICATE: 'LeadDuplicateEvent' };

export function createHandler(env: Env, services: LifecycleServices = {}) {
  const { tracer, metrics, instrument } = observability(env, 'lead-lifecycle');
  const store = lazy(() => services.store ?? leadStoreFromEnv(env, tracer));
  return instrument(async (input: unknown): Promise<{ status: AppendStatus }> => {
    const { leadId, expectedEventCount, snapshot, events, stateChanged, requestId } = parseInput(PersistInput, input, 'Persist input');
    try {
      const status = await store().append(leadId, expectedEventCount, { snapshot, events, stateChanged }, requestId);
      metrics.addMetric(STATUS_METRIC[status], MetricUnit.Count, 1);
      return { status };
    } catch (e) {
      if (e instanceof VersionConflictError) metrics.addMetric('LeadVersionConflict', MetricUnit.Count, 1);
      throw e;
    }
  });
}

export const handler = createHandler(process.env);
