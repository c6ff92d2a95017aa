/**
 * Lifecycle transition Tasks (one per event type, plus `Unknown event`): apply the event to the
 * loaded snapshot with the pure `applyEvent`. No I/O; the route the Choice state took is checked
 * against the definition, so a state machine deployed from another version of the statechart
 * fails loudly instead of applying the wrong transition. The event comes from the envelope; the
 * result leaves out the trigger's detail, which `Persist` takes from the envelope again, so the
 * state never holds an event's detail twice.
 */
import * as z from 'zod';
import type { Env } from '../../../core/env.ts';
import { RouteMismatchError } from '../../../core/errors.ts';
import { lazy } from '../../../core/lazy.ts';
import { routeOf } from '../../../definitions/lifecycle/routes.ts';
import { type EntitySnapshot, EntitySnapshotSchema, type LoggedEvent } from '../../../definitions/lifecycle/schema.ts';
import { eventFromEnvelope } from '../envelope.ts';
import { type StateChangedDetail, stateChangeOf } from '../state-changes.ts';
import { applyEvent } from '../transition.ts';
import { agentConfigFromEnv, lifecycleFromEnv, parseInput } from './services.ts';

const ApplyEventInput = z.object({
  /** The Task the Choice state routed to (see src/definitions/lifecycle/routes.ts). */
  route: z.string().min(1),
  /** The EventBridge event (`$$.Execution.Input`). */
  envelope: z.unknown(),
  entity: EntitySnapshotSchema,
});

export interface ApplyEventOutput {
  snapshot: EntitySnapshot;
  /** The events to append; the first (the trigger) without its `detail`. */
  events: LoggedEvent[];
  /** The state change to publish; `null` when state and context did not change. */
  stateChanged: StateChangedDetail | null;
}

export function createHandler(env: Env) {
  const def = lazy(() => lifecycleFromEnv(env));
  const config = lazy(() => agentConfigFromEnv(env));
  return async (input: unknown): Promise<ApplyEventOutput> => {
    const { route, envelope, entity } = parseInput(ApplyEventInput, input, 'ApplyEvent input');
    const event = eventFromEnvelope(def(), envelope);
    const expected = routeOf(def(), event.type);
    if (route !== expected)
      throw new RouteMismatchError(`${event.type} was routed to "${route}", the statechart says "${expected}"`);
    const result = applyEvent(def(), entity, event, config());
    const [{ detail: _detail, ...trigger }, ...raised] = result.events;
    return {
      snapshot: result.snapshot,
      events: [trigger as LoggedEvent, ...raised],
      stateChanged: stateChangeOf(def(), entity, result) ?? null,
    };
  };
}

export const handler = createHandler(process.env);
