/**
 * A/B of two eval runs over the same cases (fast path vs model path, step vs monolithic mode):
 * per case, whether the two took the same route, and what each cost in model calls.
 */
import type { EvalReport } from './runner.ts';

/** One case whose two runs took different routes. */
export interface RouteDifference {
  id: string;
  a: string;
  b: string;
}

/** Both runs of the eval set, side by side. */
export interface EvalComparison {
  passRate: { a: number; b: number };
  /** Mean model calls per case. */
  modelCalls: { a: number; b: number };
  /** Cases whose step route (each step and where it routed) differs: empty when the two always agree. */
  routeDifferences: RouteDifference[];
}

const routeOf = (report: EvalReport, id: string) =>
  report.cases
    .find((c) => c.id === id)
    ?.steps.map((s) => `${s.name}→${s.next ?? '(failed)'}`)
    .join(' ') ?? '(not run)';

const meanCalls = (report: EvalReport) =>
  report.cases.reduce((sum, c) => sum + c.steps.reduce((n, s) => n + (s.usage?.modelCalls ?? 0), 0), 0) / Math.max(1, report.total);

/** Compare run `a` with run `b` of the same eval cases. */
export function compareEvalRuns(a: EvalReport, b: EvalReport): EvalComparison {
  const routeDifferences = a.cases.flatMap((c) => {
    const [ra, rb] = [routeOf(a, c.id), routeOf(b, c.id)];
    return ra === rb ? [] : [{ id: c.id, a: ra, b: rb }];
  });
  return {
    passRate: { a: a.passed / Math.max(1, a.total), b: b.passed / Math.max(1, b.total) },
    modelCalls: { a: meanCalls(a), b: meanCalls(b) },
    routeDifferences,
  };
}
