/** The README shows the tool-loop diagram as `stepwise graph` generates it; eval cases can expect a named outcome such as `IterationLimit`. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RunResult } from '../../infra/local/workflow-session.ts';
import { outcomeFailures } from '../../lambdas/evals/runner.ts';
import { EvalCaseSchema } from '../../lambdas/evals/schema.ts';
import { loadWorkflow } from '../../lambdas/lib/workflow/loader.ts';
import { PROJECT_ROOT } from '../../lambdas/lib/project.ts';
import { workflowToMermaid } from '../../lambdas/lib/workflow/mermaid.ts';

describe('tool-loop docs', () => {
  it('the README shows the tool-loop diagram exactly as `stepwise graph` generates it', () => {
    const readme = readFileSync(join(PROJECT_ROOT, 'README.md'), 'utf8');
    expect(readme).toContain('```mermaid\n' + workflowToMermaid(loadWorkflow('tool-loop')) + '```');
  });
});

describe('eval outcomes', () => {
  const limit = EvalCaseSchema.parse({ scenario_id: 'c1', description: 'd', category: 'c', input: { payload: {} }, expected_output: { outcome: 'IterationLimit' } });
  const ran = (outcome?: string): RunResult => ({ file: 'c1.json', executionName: 'e', status: 'SUCCEEDED', ...(outcome && { outcome }), steps: [], toolCalls: [], outbox: [] });

  it('a case expecting an outcome fails when the execution ended in Done or another outcome', () => {
    expect(outcomeFailures(limit, ran('IterationLimit'))).toEqual([]);
    expect(outcomeFailures(limit, ran())[0]).toMatchObject({ expected: 'SUCCEEDED in IterationLimit', why: 'the execution ended in Done' });
    expect(outcomeFailures(limit, ran('RetryLimit'))[0]!.why).toBe('the execution ended in RetryLimit');
  });
});
