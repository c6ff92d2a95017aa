/**
 * The most history events one execution of a compiled workflow can record: every Task attempt with
 * every retry exhausted, as many step visits as the circuit breaker allows. Standard workflows fail
 * at 25,000 history events. The bound over-approximates a visit: it is charged the busiest Task,
 * every Choice and Pass of the definition, and every consensus Map wave with all its samples.
 */
import type { Json } from '../support/app.ts';

/** Standard workflows: an execution with more history events fails. */
export const HISTORY_EVENT_LIMIT = 25_000;

const attemptsOf = (s: Json) => 1 + (s.Retry ?? []).reduce((n: number, r: Json) => n + (r.MaxAttempts ?? 3), 0);
/** A Task entry: entered and exited, and per attempt scheduled, started, succeeded / failed / timed out. */
const taskEvents = (s: Json) => 2 + 3 * attemptsOf(s);

/** One visit of a chain's steps: its busiest Task and every Choice and Pass (2 events each). */
function visitEvents(states: Json[]): number {
  const tasks = states.filter((s) => s.Type === 'Task').map(taskEvents);
  // A Wait state is entered and exited like a Pass: a wait step's visit, bounded by the breaker like any step's.
  return Math.max(0, ...tasks) + 2 * states.filter((s) => ['Choice', 'Pass', 'Wait'].includes(s.Type)).length;
}

/**
 * The item chains of a map step and the branches of a parallel step, over the whole execution: the
 * breaker counts their steps on the longest path, so each item or branch runs at most `visits` steps
 * in all, whichever visits of the step they fall in.
 */
function chainEvents(s: Json, visits: number, itemsOf: (map: Json) => number): number {
  const chain = (states: Json[]) =>
    visits * (2 + visitEvents(states)) + states.reduce((n, inner) => n + chainEvents(inner, visits, itemsOf), 0);
  if (s.Type === 'Map') return itemsOf(s) * chain(Object.values<Json>((s.ItemProcessor ?? s.Iterator)?.States ?? {}));
  if (s.Type === 'Parallel')
    return (s.Branches ?? []).reduce((n: number, b: Json) => n + chain(Object.values<Json>(b.States)), 0);
  return 0;
}

/**
 * @param asl the compiled definition (tokens resolved)
 * @param maxSteps the manifest's circuit breaker: step visits are at most `maxSteps + 1` (the breaker's hand-off runs
 * the fallback once more)
 * @param mapItems items all Map states of one visit run together (a consensus step's `samples`): each runs its
 * iteration's Tasks once. A function instead: the items of each Map state by name (a map step's `maxItems`), whose
 * item chains, like Parallel branches, run up to the breaker.
 * @throws Error for a definition with states the bound does not cover, or Map states without an item count
 */
export function worstCaseHistoryEvents(
  asl: Json,
  maxSteps: number,
  mapItems: number | ((mapState: string) => number) = 0,
): number {
  const entries = Object.entries<Json>(asl.States);
  const states = entries.map(([, s]) => s);
  const unknown = states.find(
    (s) => !['Task', 'Choice', 'Pass', 'Wait', 'Succeed', 'Fail', 'Map', 'Parallel'].includes(s.Type),
  );
  if (unknown) throw new Error(`the history bound does not cover ${unknown.Type} states`);
  const controls = states.filter((s) => s.Type === 'Map' || s.Type === 'Parallel');
  const visits = maxSteps + 1;
  const perVisit = visitEvents(states) + controls.length * 4; /* entered, started, succeeded, exited */
  if (typeof mapItems === 'function') {
    const names = new Map(entries.map(([name, s]) => [s, name]));
    const itemsOf = (map: Json) => mapItems(names.get(map) ?? '');
    const nested = controls.reduce((n, s) => n + chainEvents(s, visits, itemsOf), 0);
    return 2 /* execution started, ended */ + visits * perVisit + nested + 2 /* the terminal state */;
  }
  if (controls.some((s) => s.Type === 'Parallel'))
    throw new Error('the history bound of Parallel states needs the item counts of its Maps');
  let perItem = 0;
  for (const map of controls) {
    const inner = Object.values<Json>((map.ItemProcessor ?? map.Iterator)?.States ?? {});
    if (inner.some((s) => !['Task', 'Pass', 'Succeed', 'Fail'].includes(s.Type)))
      throw new Error('the history bound does not cover nested control flow in a consensus Map');
    perItem = Math.max(
      perItem,
      2 /* iteration started, succeeded */ + inner.reduce((n, s) => n + (s.Type === 'Task' ? taskEvents(s) : 2), 0),
    );
  }
  if (controls.length && !mapItems) throw new Error('a definition with Map states needs its item count');
  return 2 + visits * (perVisit + mapItems * perItem) + 2;
}
