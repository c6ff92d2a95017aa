/**
 * Two eval runs over the same cases, side by side (`stepwise eval --compare`, `--mode ab`): models,
 * prompt versions, fast path vs model path, the step workflow vs the single-prompt agent. Per run: pass rate, tokens,
 * model calls, the model cost of 1,000 cases (src/evals/cost.ts, when the model has list prices)
 * and latency; per case: what differs (pass/fail, route, tokens).
 */

import type { TokenUsage } from '../runtime/contracts/step.ts';
import { sumUsage } from '../runtime/steps/types.ts';
import { costPer1000, type ExecutionCounts, loadPrices } from './cost.ts';
import type { EvalCaseResult, EvalReport } from './runner.ts';

/** One case whose two runs took different routes. */
export interface RouteDifference {
  id: string;
  a: string;
  b: string;
}

/** One run's figures. */
export interface RunFigures {
  label: string;
  passed: number;
  total: number;
  passRate: number;
  /** Mean per case. */
  modelCalls: number;
  inputTokens: number;
  outputTokens: number;
  /**
   * Model tokens of 1,000 cases at list price, USD; null when the model has no prices (a local model) or is unknown.
   */
  modelCostPer1000: number | null;
  /** Wall-clock ms per case: mean and median (null for a report without timings). */
  latencyMs: { mean: number; median: number } | null;
}

/** One case, run a against run b: what differs. */
export interface CaseDifference {
  id: string;
  /** `passed` (one passed, the other failed), `route`, `tokens` (more than 10% apart). */
  differs: string[];
  a: { passed: boolean | null; route: string; tokens: number };
  b: { passed: boolean | null; route: string; tokens: number };
}

/** Both runs of the eval set, side by side. */
export interface EvalComparison {
  a: RunFigures;
  b: RunFigures;
  passRate: { a: number; b: number };
  /** Mean model calls per case. */
  modelCalls: { a: number; b: number };
  /** Cases whose step route (each step and where it routed) differs: empty when the two always agree. */
  routeDifferences: RouteDifference[];
  /** Cases where anything differs. */
  cases: CaseDifference[];
}

const routeOf = (c: EvalCaseResult | undefined) =>
  c?.steps.map((s) => `${s.name}→${s.next ?? '(failed)'}`).join(' ') ?? '(not run)';

const usageOf = (c: EvalCaseResult | undefined): TokenUsage => sumUsage((c?.steps ?? []).map((s) => s.usage));

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
const median = (xs: number[]) => {
  const sorted = [...xs].sort((x, y) => x - y);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

/** The model cost of 1,000 cases with these mean counts, when the model has list prices. */
function modelCost(model: string | null | undefined, usage: TokenUsage): number | null {
  const prices = loadPrices();
  if (!model || !prices.models[model]) return null;
  const counts: ExecutionCounts = {
    stateTransitions: 0,
    lambdaInvocations: 0,
    lambdaGbSeconds: 0,
    dynamoReadUnits: 0,
    dynamoWriteUnits: 0,
    ...usage,
  };
  const cost = costPer1000(counts, prices, model);
  return cost.modelInput + cost.modelOutput + cost.modelCacheRead + cost.modelCacheWrite;
}

/** A report's figures; `label` defaults to its provider, model and mode. */
export function runFigures(report: EvalReport, label?: string): RunFigures {
  const usages = report.cases.map(usageOf);
  const meanUsage = Object.fromEntries(
    (['modelCalls', 'inputTokens', 'outputTokens', 'cacheReadInputTokens', 'cacheWriteInputTokens'] as const).map(
      (k) => [k, mean(usages.map((u) => u[k]))],
    ),
  ) as unknown as TokenUsage;
  const times = report.cases.flatMap((c) => (c.durationMs === undefined ? [] : [c.durationMs]));
  const run = report.run;
  return {
    label: label ?? (run ? `${run.provider}${run.model ? ` ${run.model}` : ''}, ${run.mode} mode` : 'run'),
    passed: report.passed,
    total: report.total,
    passRate: report.passed / Math.max(1, report.total),
    modelCalls: meanUsage.modelCalls,
    inputTokens: meanUsage.inputTokens,
    outputTokens: meanUsage.outputTokens,
    modelCostPer1000: modelCost(run?.model, meanUsage),
    latencyMs: times.length ? { mean: mean(times), median: median(times) } : null,
  };
}

/** Compare run `a` with run `b` of the same eval cases. */
export function compareEvalRuns(a: EvalReport, b: EvalReport, labels: { a?: string; b?: string } = {}): EvalComparison {
  const fa = runFigures(a, labels.a);
  const fb = runFigures(b, labels.b);
  const ids = [...new Set([...a.cases.map((c) => c.id), ...b.cases.map((c) => c.id)])];
  const cases = ids.flatMap((id) => {
    const [ca, cb] = [a.cases.find((c) => c.id === id), b.cases.find((c) => c.id === id)];
    const side = (c: EvalCaseResult | undefined) => ({
      passed: c?.passed ?? null,
      route: routeOf(c),
      tokens: usageOf(c).inputTokens + usageOf(c).outputTokens,
    });
    const [sa, sb] = [side(ca), side(cb)];
    const differs = [
      ...(sa.passed !== sb.passed ? ['passed'] : []),
      ...(sa.route !== sb.route ? ['route'] : []),
      ...(Math.abs(sa.tokens - sb.tokens) > 0.1 * Math.max(sa.tokens, sb.tokens) ? ['tokens'] : []),
    ];
    return differs.length ? [{ id, differs, a: sa, b: sb }] : [];
  });
  return {
    a: fa,
    b: fb,
    passRate: { a: fa.passRate, b: fb.passRate },
    modelCalls: { a: fa.modelCalls, b: fb.modelCalls },
    routeDifferences: cases
      .filter((c) => c.differs.includes('route'))
      .map((c) => ({ id: c.id, a: c.a.route, b: c.b.route })),
    cases,
  };
}

const usd = (n: number | null) => (n === null ? 'n/a (no list price)' : `$${n.toFixed(4)}`);
const ms = (l: RunFigures['latencyMs']) =>
  l ? `${Math.round(l.mean)} ms mean, ${Math.round(l.median)} ms median` : 'n/a';

/** The comparison as text: both runs' figures, then each case that differs. */
export function comparisonText(c: EvalComparison): string {
  const row = (name: string, f: RunFigures) =>
    `${name}: ${f.label}\n   pass rate ${f.passed}/${f.total} (${(100 * f.passRate).toFixed(0)}%), ${f.modelCalls.toFixed(2)} model calls and ${Math.round(f.inputTokens)} in / ${Math.round(f.outputTokens)} out tokens per case, model cost per 1,000 cases ${usd(f.modelCostPer1000)}, latency ${ms(f.latencyMs)}`;
  const lines = [
    row('A', c.a),
    row('B', c.b),
    c.cases.length ? `${c.cases.length} case(s) differ:` : 'No case differs (pass/fail, route, tokens).',
  ];
  for (const d of c.cases) {
    const pass = (p: boolean | null) => (p === null ? 'not run' : p ? 'passed' : 'failed');
    lines.push(
      `  ${d.id} (${d.differs.join(', ')})`,
      `    A ${pass(d.a.passed)}, ${d.a.tokens} tokens: ${d.a.route}`,
      `    B ${pass(d.b.passed)}, ${d.b.tokens} tokens: ${d.b.route}`,
    );
  }
  return `${lines.join('\n')}\n`;
}
