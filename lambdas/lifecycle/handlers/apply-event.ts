/**
 * Lifecycle transition Tasks (one per declaring state and event, plus `LogOnly`): apply the
 * event to the loaded snapshot with the pure `applyEvent`. No I/O; the route the Choice state
 * took is checked against the definition, so a state machine deployed from another version of
 * the statechart fails loudly instead of applying the wrong transition.
 */
import * as z from 'zod';
import type { Env } from '../../lib/contracts.ts';
import { RouteMismatchError } from '../../lib/errors.ts';
import { routeOf } from '../routes.ts';
import { LeadSnapshotSchema, LifecycleEventSchema, type LeadSnapshot, type LoggedEvent } from '../schema.ts';
import { stateChangeOf, type StateChangedDetail } from '../state-changes.ts';
import { applyEvent } from '../transition.ts';
import { agentConfigFromEnv, lazy, lifecycleFromEnv, parseInput } from './services.ts';

const ApplyEventInput = z.object({
  /** The Task the Choice state routed to (see lambdas/lifecycle/routes.ts). */
  route: z.string().min(1),
  event: LifecycleEventSchema,
  lead: LeadSnapshotSchema,
});

export interface ApplyEventOutput {
  snapshot: LeadSnapshot;
  events: LoggedEvent[];
  /** The `lead.state_changed` detail to publish; `null` when state and context did not change. */
  stateChanged: StateChangedDetail | null;
}

export function createHandler(env: Env) {
  const def = lazy(() => lifecycleFromEnv(env));
  const config = lazy(() => agentConfigFromEnv(env));
  return async (input: unknown): Promise<ApplyEventOutput> => {
    const { route, event, lead } = parseInput(ApplyEventInput, input, 'ApplyEvent input');
    const expected = routeOf(def(), lead.state, event.type);
    if (route !== expected) throw new RouteMismatchError(`${event.type} in ${lead.state} was routed to "${route}", the statechart says "${expected}"`);
    const result = applyEvent(def(), lead, event, config());
    return { ...result, stateChanged: stateChangeOf(def(), lead, result) ?? null };
  };
}

export const handler = createHandler(process.env);
