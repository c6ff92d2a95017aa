/**
 * Lifecycle Task `Persist`: appends the applied events and the new snapshot in one conditional
 * write. A `VersionConflictError` sends the state machine back to `LoadLead`.
 */
import { z } from 'zod';
import type { Env } from '../../lib/contracts.ts';
import { LeadSnapshotSchema, LoggedEventSchema } from '../schema.ts';
import { leadStoreFromEnv, type AppendStatus } from '../store.ts';
import { lazy, parseInput, type LifecycleServices } from './services.ts';

const PersistInput = z.object({
  leadId: z.string().min(1),
  /** The `eventCount` the snapshot was loaded with. */
  expectedEventCount: z.number().int().nonnegative(),
  snapshot: LeadSnapshotSchema,
  events: z.array(LoggedEventSchema).min(1),
});

export function createHandler(env: Env, services: LifecycleServices = {}) {
  const store = lazy(() => services.store ?? leadStoreFromEnv(env));
  return async (input: unknown): Promise<{ status: AppendStatus }> => {
    const { leadId, expectedEventCount, snapshot, events } = parseInput(PersistInput, input, 'Persist input');
    return { status: await store().append(leadId, expectedEventCount, { snapshot, events }) };
  };
}

export const handler = createHandler(process.env);
