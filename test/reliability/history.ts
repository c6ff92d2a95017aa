/**
 * The most history events one execution of a compiled workflow can record: every Task attempt with
 * every retry exhausted, as many step visits as the circuit breaker allows. Standard workflows fail
 * at 25,000 history events. The bound over-approximates a visit: it is charged the busiest Task,
 * every Choice and Pass of the definition, and every consensus Map wave with all its samples.
 */
import type { Json } from '../cdk/template.ts';

/** Standard workflows: an execution with more history events fails. */
export const HISTORY_EVENT_LIMIT = 25_000;

const attemptsOf = (s: Json) => 1 + (s.Retry ?? []).reduce((n: number, r: Json) => n + (r.MaxAttempts ?? 3), 0);
/** A Task entry: entered and exited, and per attempt scheduled, started, succeeded / failed / timed out. */
const taskEvents = (s: Json) => 2 + 3 * attemptsOf(s);

/**
 * @param asl the compiled definition (tokens resolved)
 * @param maxSteps the manifest's circuit breaker: step visits are at most `maxSteps + 1` (the breaker's hand-off runs
 * the fallback once more)
 * @param mapItems items all Map states of one visit run together (a consensus step's `samples`): each runs its
 * iteration's Tasks once
 * @throws Error for a definition with states the bound does not cover (Parallel, Wait loops, nested Maps)
 */
export function worstCaseHistoryEvents(asl: Json, maxSteps: number, mapItems = 0): number {
  const states = Object.values<Json>(asl.States);
  const unknown = states.find((s) => !['Task', 'Choice', 'Pass', 'Succeed', 'Fail', 'Map'].includes(s.Type));
  if (unknown) throw new Error(`the history bound does not cover ${unknown.Type} states`);
  const maps = states.filter((s) => s.Type === 'Map');
  let perItem = 0;
  for (const map of maps) {
    const inner = Object.values<Json>((map.ItemProcessor ?? map.Iterator)?.States ?? {});
    if (inner.some((s) => !['Task', 'Pass', 'Succeed', 'Fail'].includes(s.Type)))
      throw new Error('the history bound does not cover nested control flow in a Map');
    perItem = Math.max(
      perItem,
      2 /* iteration started, succeeded */ + inner.reduce((n, s) => n + (s.Type === 'Task' ? taskEvents(s) : 2), 0),
    );
  }
  if (maps.length && !mapItems) throw new Error('a definition with Map states needs its item count');
  const busiestTask = Math.max(...states.filter((s) => s.Type === 'Task').map(taskEvents));
  const glue = 2 * states.filter((s) => s.Type === 'Choice' || s.Type === 'Pass').length;
  const perVisit = busiestTask + glue + maps.length * 4 /* entered, started, succeeded, exited */ + mapItems * perItem;
  return 2 /* execution started, ended */ + (maxSteps + 1) * perVisit + 2 /* the terminal state */;
}
