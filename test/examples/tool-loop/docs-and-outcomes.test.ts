/** Eval cases can expect a named outcome such as `IterationLimit`. (The docs' diagram: test/docs/generated.test.ts.) */
import { describe, expect, it } from 'vitest';
import { EvalCaseSchema } from '../../../src/definitions/eval-cases.ts';
import { outcomeFailures } from '../../../src/evals/runner.ts';
import type { RunResult } from '../../../src/local/sessions/workflow-session.ts';

describe('eval outcomes', () => {
  const limit = EvalCaseSchema.parse({
    scenario_id: 'c1',
    description: 'd',
    category: 'c',
    input: { payload: {} },
    expected_output: { outcome: 'IterationLimit' },
  });
  const ran = (outcome?: string): RunResult => ({
    file: 'c1.json',
    executionName: 'e',
    status: 'SUCCEEDED',
    ...(outcome && { outcome }),
    steps: [],
    toolCalls: [],
    outbox: [],
  });

  it('a case expecting an outcome fails when the execution ended in Done or another outcome', () => {
    expect(outcomeFailures(limit, ran('IterationLimit'))).toEqual([]);
    expect(outcomeFailures(limit, ran())[0]).toMatchObject({
      expected: 'SUCCEEDED in IterationLimit',
      why: 'the execution ended in Done',
    });
    expect(outcomeFailures(limit, ran('RetryLimit'))[0]!.why).toBe('the execution ended in RetryLimit');
  });
});
