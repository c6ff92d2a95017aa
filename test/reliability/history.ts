/**
 * The most history events one execution of a compiled workflow can record: every Task visit with
 * every retry exhausted, as many visits as the circuit breaker allows. Standard workflows fail at
 * 25,000 history events; the compiled graph has no loops the breaker does not count and no Map or
 * Parallel state, so this bound is exact enough to compare.
 */
import type { Json } from '../infra/template.ts';

/** Standard workflows: an execution with more history events fails. */
export const HISTORY_EVENT_LIMIT = 25_000;

/**
 * @param asl the compiled definition
 * @param maxSteps the manifest's circuit breaker: Task visits are at most `maxSteps + 1` (the breaker's hand-off runs the fallback once more)
 * @throws Error for a definition with states the bound does not cover (Map, Parallel, Wait loops)
 */
export function worstCaseHistoryEvents(asl: Json, maxSteps: number): number {
  const states = Object.values<Json>(asl.States);
  const unknown = states.find((s) => !['Task', 'Choice', 'Pass', 'Succeed', 'Fail'].includes(s.Type));
  if (unknown) throw new Error(`the history bound does not cover ${unknown.Type} states`);
  // Per attempt: scheduled, started, and succeeded / failed / timed out.
  const attempts = Math.max(...states.filter((s) => s.Type === 'Task').map((s) => 1 + (s.Retry ?? []).reduce((n: number, r: Json) => n + (r.MaxAttempts ?? 3), 0)));
  const perVisit = 2 /* task entered, exited */ + 3 * attempts + 2 /* the Choice after it */;
  const passes = states.filter((s) => s.Type === 'Pass').length;
  return 2 /* execution started, ended */ + 2 * passes + (maxSteps + 1) * perVisit + 2 /* the terminal state */;
}
