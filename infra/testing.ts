/**
 * `stepwise/testing`: the local runtime and the eval runner, for a project's own tests. A workflow
 * session runs the synthesized state machine with the real step handlers, DynamoDB Local and the
 * offline stand-in (or Bedrock); the eval runner judges a workflow's eval cases through it.
 *
 * @example
 * // test/evals.test.ts
 * import { expect, it } from 'vitest';
 * import { evalWorkflow } from 'stepwise/testing';
 *
 * it('support-desk passes its evals', async () => {
 *   expect((await evalWorkflow('support-desk')).failed).toBe(0);
 * });
 */
import { loadEvalCases } from '../lambdas/evals/schema.ts';
import { runEvalCases, type EvalReport, type EvalRunOptions } from '../lambdas/evals/runner.ts';
import { STATEMACHINES_DIR } from '../lambdas/lib/project.ts';
import { listWorkflows as listWorkflowsIn, loadWorkflow } from '../lambdas/lib/workflow/loader.ts';

export { runEvalCases, type EvalCaseResult, type EvalReport, type EvalRunOptions } from '../lambdas/evals/runner.ts';
export { loadEvalCases, loadEvalCasesFrom, parseEvalCase, type EvalCase } from '../lambdas/evals/schema.ts';
export { WorkflowSession, type ModelChoice, type RunResult, type RunStep, type RunToolCall, type WorkflowSessionOptions, type OutboxMail } from './local/workflow-session.ts';
export { LifecycleSession, type LifecycleSessionOptions } from './local/lifecycle-session.ts';
export { synthProject, synthesize, type SynthesizedApp } from './local/synth.ts';
export type { ModelProvider } from '../lambdas/models/port.ts';

/** The project's workflows (folders of `statemachines/` with a `workflow.yaml`). */
export const listWorkflows = (): string[] => listWorkflowsIn(STATEMACHINES_DIR);

/**
 * Run a workflow's eval cases (`statemachines/<workflow>/evals/*.yaml`) in one local session.
 * @default options.model 'offline'
 */
export function evalWorkflow(workflow: string, options: EvalRunOptions = {}): Promise<EvalReport> {
  return runEvalCases(workflow, loadEvalCases(loadWorkflow(workflow).dir), { session: { logLevel: 'SILENT' }, ...options });
}
