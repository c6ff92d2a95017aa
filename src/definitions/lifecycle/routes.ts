/**
 * How the compiled lifecycle state machine routes an event: to one transition Task per event type
 * of the vocabulary, named by the type (`meeting.booked`), and to `Unknown event` for a type the
 * lifecycle does not know. Shared by the compiler (src/cdk/constructs/lifecycle-workflow.ts) and the
 * Task's handler, which checks that it was reached by the route the statechart resolves.
 */
import { handlerOf, knowsEvent, type LifecycleDefinition, type Transition } from './schema.ts';

/** The Task for events outside the vocabulary: they are logged with a refusal. */
export const UNKNOWN_EVENT = 'Unknown event';

/**
 * The Task that applies an event of `type`.
 * @example routeOf(def, 'meeting.booked') // 'meeting.booked'; routeOf(def, 'lead.sneezed') // 'Unknown event'
 */
export function routeOf(def: LifecycleDefinition, type: string): string {
  return knowsEvent(def, type) ? type : UNKNOWN_EVENT;
}

/** What `t` (the handler of an event of `type`) does in a leaf, in words. */
function outcome(def: LifecycleDefinition, type: string, t: Transition | undefined): string {
  if (!t) return 'logged only';
  switch (t.kind) {
    case 'goto':
      return `→ ${t.target}${t.actions.length ? ` (${t.actions.join(', ')})` : ''}`;
    case 'stay':
      return `stays (${t.actions.join(', ')})`;
    case 'restart':
      // Validated at load: the initial state handles the event with a goto.
      return `→ next conversation, ${(handlerOf(def, def.initial, type)!.transition as { target: string }).target}`;
    case 'fromDetail':
      return `→ the leaf named by detail.${t.field}`;
  }
}

/**
 * One line saying what an event of `type` does in each leaf, leaves with the same outcome grouped:
 * the `Comment` of its transition Task.
 * @example describeTransitions(def, 'meeting.missed') // 'meeting_booked → no_show; elsewhere logged only'
 */
export function describeTransitions(def: LifecycleDefinition, type: string): string {
  const groups = new Map<string, string[]>();
  for (const leaf of def.leaves) {
    const text = outcome(def, type, handlerOf(def, leaf, type)?.transition);
    groups.set(text, [...(groups.get(text) ?? []), leaf]);
  }
  const logged = groups.get('logged only');
  groups.delete('logged only');
  const running = def.leaves.filter((l) => !def.states[l]!.terminal);
  const who = (leaves: string[]) =>
    leaves.length === def.leaves.length
      ? 'every state'
      : leaves.length > 1 && leaves.join() === running.join()
        ? 'every non-terminal state'
        : leaves.join(', ');
  const parts = [...groups].map(([text, leaves]) => `${who(leaves)} ${text}`);
  if (logged) parts.push(parts.length ? 'elsewhere logged only' : 'logged only in every state');
  return parts.join('; ');
}
