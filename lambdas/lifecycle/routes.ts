/**
 * How the compiled lifecycle state machine routes an event: one transition Task per declaration
 * (the state that declares the handler, parents and the machine level included), named
 * `<declaring state>: <event>` (`<lifecycle>: <event>` for the machine level), and `LogOnly` for
 * an event no state handles. Shared by the compiler (infra/constructs/lifecycle-workflow.ts) and
 * the Task's handler, which checks that it was reached by the route the statechart resolves.
 */
import { DefinitionError } from '../lib/errors.ts';
import { isLeadEventType, type LifecycleDefinition } from './schema.ts';

/** The Task for events that no state handles: they are logged (and may still meet a goal). */
export const LOG_ONLY = 'LogOnly';
/** Step Functions' limit on state names. */
const MAX_STATE_NAME = 80;

/**
 * The Task that applies `type` to a lead in `leaf`.
 * @example routeOf(def, 'engaged', 'meeting.booked') // 'lead_qualification: meeting.booked'
 * @throws DefinitionError when the name would be longer than a state name may be.
 */
export function routeOf(def: LifecycleDefinition, leaf: string, type: string): string {
  const resolved = isLeadEventType(type) ? def.handlers[leaf]?.[type] : undefined;
  if (!resolved) return LOG_ONLY;
  const name = `${resolved.declaredIn ?? def.name}: ${type}`;
  if (name.length > MAX_STATE_NAME) throw new DefinitionError(def.file, `handlers.${leaf}.${type}`, `Task name "${name}" is longer than ${MAX_STATE_NAME} characters`);
  return name;
}
