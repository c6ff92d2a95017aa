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
import { readFileSync } from 'node:fs';
import { loadEvalCases } from './definitions/eval-cases.ts';
import { entityStatuses } from './runtime/lifecycle/queries.ts';
import type { EntityStatus } from './runtime/lifecycle/transition.ts';
import { failuresOf, LifecycleSession, parseReplayFile, type LifecycleSessionOptions, type ReplayFailure } from './local/lifecycle-session.ts';
import { runEvalCases, type EvalReport, type EvalRunOptions } from './evals/runner.ts';
import { STATEMACHINES_DIR } from './core/paths.ts';
import { listWorkflows as listWorkflowsIn, loadWorkflow } from './definitions/workflow/loader.ts';

export { runEvalCases, type EvalCaseResult, type EvalReport, type EvalRunOptions } from './evals/runner.ts';
export { loadEvalCases, loadEvalCasesFrom, parseEvalCase, type EvalCase } from './definitions/eval-cases.ts';
export { WorkflowSession, type ModelChoice, type RunResult, type RunStep, type RunToolCall, type WorkflowSessionOptions, type OutboxMail } from './local/workflow-session.ts';
export { LifecycleSession, failuresOf, parseReplayFile, type LifecycleSessionOptions, type ReplayFailure };
export { listLifecycles } from './definitions/lifecycle/loader.ts';
export { synthProject, synthesize, type SynthesizedApp } from './local/synth.ts';
export type { ModelProvider } from './runtime/models/port.ts';

/** The project's workflows (folders of `statemachines/` with a `workflow.yaml`). */
export const listWorkflows = (): string[] => listWorkflowsIn(STATEMACHINES_DIR);

/**
 * Run a workflow's eval cases (`statemachines/<workflow>/evals/*.yaml`) in one local session.
 * @default options.model 'offline'
 */
export function evalWorkflow(workflow: string, options: EvalRunOptions = {}): Promise<EvalReport> {
  return runEvalCases(workflow, loadEvalCases(loadWorkflow(workflow).dir), { session: { logLevel: 'SILENT' }, ...options });
}

/** What {@link replayLifecycle} read back. */
export interface LifecycleReplay {
  /** Every entity of the file, by id: its state, path, context, version, conversation and event count. */
  entities: Record<string, EntityStatus>;
  /** Every event that was not applied or recorded as a duplicate, and every listener, outbox or timer failure. */
  failures: ReplayFailure[];
  /** Lines of the file that are not events, with their line numbers. */
  malformed: ReturnType<typeof parseReplayFile>['malformed'];
}

/**
 * Replay a JSON Lines file of events (`{ "id", "<entity key>", "type", "time", "detail"? }` per
 * line) through a lifecycle of the project, on its synthesized state machine and local bus, and
 * read back every entity: what `stepwise lifecycle <name> replay --json` prints.
 * @example
 * const { entities, failures } = await replayLifecycle('orders', 'statemachines/orders/samples/orders.jsonl', { store: 'memory' });
 */
export async function replayLifecycle(lifecycle: string, file: string, options: Omit<LifecycleSessionOptions, 'lifecycle'> = {}): Promise<LifecycleReplay> {
  const session = await LifecycleSession.start({ ...options, lifecycle });
  try {
    const parsed = parseReplayFile(readFileSync(file, 'utf8'), session.definition);
    await session.replay(parsed.timeline, { clock: parsed.timeline.length > parsed.events.length });
    return { entities: await entityStatuses(session.store, session.definition), failures: failuresOf(session), malformed: parsed.malformed };
  } finally {
    await session.stop();
  }
}
