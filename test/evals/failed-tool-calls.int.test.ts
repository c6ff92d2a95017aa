/**
 * A mocked tool call that fails is recorded, so an eval case can assert it: also when the step
 * that made it failed afterwards (a failed step returns no output, so its calls come from what
 * the case's mocks answered). In a copy of the fixture project with the `stepwise init` workflow, whose
 * look-up step is changed to fail when its lookup fails.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { copyFixtureProject } from '../support/fixture-project.ts';
import { stepwise } from '../support/project-copy.ts';
import { useTempDirs } from '../support/tmp.ts';

const tempDir = useTempDirs('stepwise-failed-calls-');

const CASE = `scenario_id: lookup_down_001
description: The account lookup fails; the look-up step fails with it and the hand-off answers.
category: hand-off
input:
  payload: { customerId: C1001, question: Why was I charged twice? }
  mock_function_responses:
    lookup_account: { error: "ToolUnavailableError: the account system is down" }
expected_output:
  expected_steps:
    - step_name: 01-understand
    - step_name: 02-look-up
      function_call: lookup_account
      function_args: { customerId: C1001 }
    - step_name: 04-hand-off
  expected_function_calls:
    - { function_name: lookup_account, failed: true }
`;

describe('failed mocked tool calls in evals', () => {
  let dir: string;
  beforeAll(async () => {
    dir = copyFixtureProject(tempDir(), { built: true });
    const init = await stepwise(dir, 'init', 'support-desk');
    expect(init.code, init.err).toBe(0);
    const step = join(dir, 'lambdas/workflows/support-desk/steps/look-up.ts');
    // The step gives up with an error of its own when the lookup fails: the fallback takes over.
    writeFileSync(
      step,
      readFileSync(step, 'utf8').replace(
        '  const account = call.result',
        '  if (call.error !== undefined) throw new Error(`lookup failed: ${call.error}`);\n  const account = call.result',
      ),
    );
    writeFileSync(join(dir, 'statemachines/support-desk/evals/lookup_down_001.yaml'), CASE);
  }, 120_000);

  it('are recorded in the step that made them, even when that step failed, and can be expected to fail', {
    timeout: 240_000,
  }, async () => {
    const ran = await stepwise(dir, 'eval', 'support-desk', '--json');
    const report = JSON.parse(ran.out);
    const down = report.cases.find((c: { id: string }) => c.id === 'lookup_down_001');
    expect(down.failures).toEqual([]);
    expect(down.steps.map((s: { name: string }) => s.name)).toEqual(['01-understand', '02-look-up', '04-hand-off']);
    expect(ran.code, ran.err).toBe(0);
  });

  it('fail a case that expects the call to succeed', { timeout: 240_000 }, async () => {
    const file = join(dir, 'statemachines/support-desk/evals/lookup_down_001.yaml');
    writeFileSync(file, CASE.replace('failed: true', 'failed: false'));
    const ran = await stepwise(dir, 'eval', 'support-desk', '--json');
    const down = JSON.parse(ran.out).cases.find((c: { id: string }) => c.id === 'lookup_down_001');
    expect(down.failures.map((f: { why: string }) => f.why)).toEqual([
      'lookup_account in 02-look-up failed (ToolUnavailableError: the account system is down), expected it to succeed',
    ]);
    expect(ran.code).toBe(1);
  });
});
