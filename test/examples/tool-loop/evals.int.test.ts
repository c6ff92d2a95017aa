/** Every tool-loop eval case passes through the synthesized ASL, the offline stand-in and the real step handlers. */
import { describe, expect, it } from 'vitest';
import { loadEvalCases } from '../../../src/definitions/eval-cases.ts';
import { loadWorkflow } from '../../../src/definitions/workflow/loader.ts';
import { runEvalCases } from '../../../src/evals/runner.ts';

describe('tool-loop evals', () => {
  it('covers every category (one tool, several, ask, iteration limit, new group, notes, tie, time, tool error, voice input), and all pass', async () => {
    const cases = loadEvalCases(loadWorkflow('tool-loop').dir);
    expect(cases.map((c) => c.category).sort()).toEqual([
      'ask',
      'iteration_limit',
      'multi_tool',
      'new_group',
      'notes',
      'one_tool',
      'tie',
      'time',
      'tool_error',
      'voice_input',
    ]);
    const report = await runEvalCases('tool-loop', cases, { session: { logLevel: 'SILENT' } });
    expect(report.cases.filter((c) => !c.passed)).toEqual([]);
    expect(report).toMatchObject({ passed: 10, failed: 0, total: 10 });
  });
});
