/**
 * The turn pipeline's eval cases through the synthesized ASL (offline stand-in): at least 8, with
 * multi-turn conversations (`input.turns`), every one passing; a conversation whose earlier turn
 * fails is reported as such, and turns of one case never see another case's session.
 */
import { describe, expect, it } from 'vitest';
import { loadEvalCases, parseEvalCase } from '../../../src/definitions/eval-cases.ts';
import { loadWorkflow } from '../../../src/definitions/workflow/loader.ts';
import { runEvalCases } from '../../../src/evals/runner.ts';

const cases = loadEvalCases(loadWorkflow('turn-pipeline').dir);

describe('turn-pipeline evals', () => {
  it('has at least 8 eval cases, multi-turn ones included, and every one passes', async () => {
    expect(cases.length).toBeGreaterThanOrEqual(8);
    expect(cases.filter((c) => (c.input.turns?.length ?? 0) > 1).length).toBeGreaterThanOrEqual(4);
    const report = await runEvalCases('turn-pipeline', cases, { session: { logLevel: 'SILENT' } });
    expect(report.cases.filter((c) => !c.passed)).toEqual([]);
    expect(report.passed).toBe(cases.length);
  }, 300_000);

  it('each case has its own sessions: the same session id in two cases starts fresh; a failed earlier turn is reported', async () => {
    const second = parseEvalCase(
      'fresh.yaml',
      `
scenario_id: fresh_session_001
description: Same session id as refund_flow_001, but its own store - turn 1 again.
category: multi-turn
input:
  turns:
    - { sessionId: s-flow-1, message: "I want a refund" }
expected_output:
  expected_steps:
    - step_name: 01-load-session
      output_contains: ['"turn":0']
    - { step_name: 02-extract-context }
    - { step_name: 04-retrieve }
    - { step_name: 05-filter }
    - { step_name: 05a-rule-filter }
    - { step_name: 06-run-tools }
    - { step_name: 07-generate }
    - { step_name: 08-judge }
    - { step_name: 09-enforce }
    - step_name: 10-persist
      output_contains: ["TURN: 1"]
`,
    );
    const broken = parseEvalCase(
      'broken.yaml',
      `
scenario_id: broken_turn_001
description: The first turn breaks the input schema.
category: multi-turn
input:
  turns:
    - { sessionId: "no spaces allowed", message: hi }
    - { sessionId: s-broken, message: hi }
expected_output:
  expected_steps: [{ step_name: 01-load-session }]
`,
    );
    const refundFlow = cases.find((c) => c.scenario_id === 'refund_flow_001')!;
    const report = await runEvalCases('turn-pipeline', [refundFlow, second, broken], {
      session: { logLevel: 'SILENT' },
    });
    expect(report.cases.map((c) => [c.id, c.passed])).toEqual([
      ['refund_flow_001', true],
      ['fresh_session_001', true],
      ['broken_turn_001', false],
    ]);
    expect(report.cases[2]!.failures[0]!.why).toMatch(/^turn 1 of 2 did not succeed/);
  }, 300_000);
});
