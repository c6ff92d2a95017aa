/**
 * The heuristic fast path against the model path on the whole eval set: it must never route an
 * email differently from the model (here the offline stand-in). A difference fails with the case,
 * both routes and the fix to make (tighten the heuristic or correct the eval).
 */
import { describe, expect, it } from 'vitest';
import { loadEvalCases } from '../../../src/definitions/eval-cases.ts';
import { loadWorkflow } from '../../../src/definitions/workflow/loader.ts';
import { compareEvalRuns } from '../../../src/evals/compare.ts';
import { runEvalCases } from '../../../src/evals/runner.ts';

describe('fast path vs model path on the warranty evals', () => {
  it('routes every case as the model does, passes them all, with fewer model calls', async () => {
    const cases = loadEvalCases(loadWorkflow('warranty-email').dir);
    const fast = await runEvalCases('warranty-email', cases, { session: { logLevel: 'SILENT' } });
    const model = await runEvalCases('warranty-email', cases, {
      session: { logLevel: 'SILENT', localEnv: { FAST_PATHS: 'off' } },
    });
    const ab = compareEvalRuns(fast, model);
    expect(ab.routeDifferences, 'the fast path routed these cases differently from the model').toEqual([]);
    expect(ab.passRate).toEqual({ a: 1, b: 1 });
    expect(ab.modelCalls.a).toBeLessThan(ab.modelCalls.b);
    // The fast path decided some cases, the model all of them in the other run.
    const decidedFast = fast.cases.filter((c) => c.steps[0]?.decidedBy === 'code').length;
    expect(decidedFast).toBeGreaterThan(0);
    expect(model.cases.every((c) => c.steps[0]?.decidedBy === 'offline')).toBe(true);
  }, 240_000);
});
