/**
 * Lifecycle transition Tasks (one per declaring state and event, plus `log only`): apply the
 * event to the loaded snapshot with the pure `applyEvent`. No I/O; the route the Choice state
 * took is checked against the definition, so a state machine deployed from another version of
 * the statechart fails loudly instead of applying the wrong transition.
 */
import { isDeepStrictEqual } from 'node:util';
import { z } from 'zod';
import type { Env } from '../../lib/contracts.ts';
import { RouteMismatchError } from '../../lib/errors.ts';
import { LeadSnapshotSchema, LifecycleEventSchema, isLeadEventType, type LifecycleDefinition, type LoggedEvent, type LeadSnapshot } from '../schema.ts';
import { stateChangeOf, type StateChangedDetail } from '../state-changes.ts';
import { applyEvent } from '../transition.ts';
import { agentConfigFromEnv, lazy, lifecycleFromEnv, parseInput } from './services.ts';

/** Which declaration the Choice state routed to; `null`: no handler, the event is only logged. */
export const RouteSchema = z.object({ declaredIn: z.string().nullable(), event: z.string() }).strict().nullable();
export type Route = z.infer<typeof RouteSchema>;

const ApplyEventInput = z.object({ route: RouteSchema, event: LifecycleEventSchema, lead: LeadSnapshotSchema });

export interface ApplyEventOutput {
  snapshot: LeadSnapshot;
  events: LoggedEvent[];
  /** The `lead.state_changed` detail to publish; `null` when state and context did not change. */
  stateChanged: StateChangedDetail | null;
}

/** The route the definition resolves for an event type in a leaf. */
export function routeOf(def: LifecycleDefinition, leaf: string, type: string): Route {
  const resolved = isLeadEventType(type) ? def.handlers[leaf]?.[type] : undefined;
  return resolved ? { declaredIn: resolved.declaredIn, event: type } : null;
}

export function createHandler(env: Env) {
  const def = lazy(() => lifecycleFromEnv(env));
  const config = lazy(() => agentConfigFromEnv(env));
  return async (input: unknown): Promise<ApplyEventOutput> => {
    const { route, event, lead } = parseInput(ApplyEventInput, input, 'ApplyEvent input');
    const expected = routeOf(def(), lead.state, event.type);
    if (!isDeepStrictEqual(route, expected))
      throw new RouteMismatchError(`${event.type} in ${lead.state} was routed to ${JSON.stringify(route)}, the statechart says ${JSON.stringify(expected)}`);
    const result = applyEvent(def(), lead, event, config());
    return { ...result, stateChanged: stateChangeOf(def(), lead, result) ?? null };
  };
}

export const handler = createHandler(process.env);
