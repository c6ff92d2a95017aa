/**
 * The investigation's eval cases - the six scenarios of the issue - pass through the synthesized ASL with the offline
 * stand-in.
 */
import { describe, expect, it } from 'vitest';
import { loadEvalCases } from '../../../src/definitions/eval-cases.ts';
import { loadWorkflow } from '../../../src/definitions/workflow/loader.ts';
import { runEvalCases } from '../../../src/evals/runner.ts';

describe('investigation evals', () => {
  it('cover early exit, a raised total, derived steps, a backtrack, a resumed and a timed-out checkpoint, a clipped plan, and pass', async () => {
    const cases = loadEvalCases(loadWorkflow('investigation').dir);
    expect(cases.map((c) => c.category).sort()).toEqual([
      'backtracking',
      'confidence_exit',
      'derived_steps',
      'dynamic_steps',
      'pause',
      'pause',
      'pause',
      'planning',
    ]);
    expect(cases.flatMap((c) => c.input.checkpoints)).toEqual([{ output: expect.any(Object) }, { timeout: true }]);
    const report = await runEvalCases('investigation', cases, { session: { logLevel: 'SILENT' } });
    expect(report.cases.filter((c) => !c.passed)).toEqual([]);
    expect(report.passed).toBe(8);
  }, 120_000);

  it('fails a case whose execution is left paused, naming the checkpoint', async () => {
    const [resumed] = loadEvalCases(loadWorkflow('investigation').dir).filter(
      (c) => c.scenario_id === 'checkpoint_resumed_001',
    );
    const report = await runEvalCases(
      'investigation',
      [{ ...resumed!, input: { ...resumed!.input, checkpoints: [] } }],
      { session: { logLevel: 'SILENT' } },
    );
    expect(report.cases[0]!.failures[0]).toMatchObject({
      expected: 'SUCCEEDED',
      why: expect.stringContaining('still paused at a checkpoint'),
    });
  }, 120_000);
});
