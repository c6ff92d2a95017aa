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
import { STATEMACHINES_DIR } from './core/paths.ts';
import { loadEvalCases } from './definitions/eval-cases.ts';
import { listWorkflows as listWorkflowsIn, loadWorkflow } from './definitions/workflow/loader.ts';
import { type EvalReport, type EvalRunOptions, runEvalCases } from './evals/runner.ts';
import {
  failuresOf,
  LifecycleSession,
  type LifecycleSessionOptions,
  parseReplayFile,
  type ReplayFailure,
} from './local/sessions/lifecycle-session.ts';
import { entityStatuses } from './runtime/lifecycle/queries.ts';
import type { EntityStatus } from './runtime/lifecycle/transition.ts';

export { type EvalCase, loadEvalCases, loadEvalCasesFrom, parseEvalCase } from './definitions/eval-cases.ts';
export { listLifecycles } from './definitions/lifecycle/loader.ts';
export { type EvalCaseResult, type EvalReport, type EvalRunOptions, runEvalCases } from './evals/runner.ts';
export { DYNAMODB_ENDPOINT_VARIABLE, shareDynamoDbLocal } from './local/cloud/dynamodb-connection.ts';
export { type SynthesizedApp, synthesize, synthProject } from './local/cloud/synth.ts';
export {
  type ModelChoice,
  type OutboxMail,
  type RunResult,
  type RunStep,
  type RunToolCall,
  WorkflowSession,
  type WorkflowSessionOptions,
} from './local/sessions/workflow-session.ts';
export type { ModelProvider } from './runtime/contracts/model-port.ts';
export { failuresOf, LifecycleSession, type LifecycleSessionOptions, parseReplayFile, type ReplayFailure };

/** The project's workflows (folders of `statemachines/` with a `workflow.yaml`). */
export const listWorkflows = (): string[] => listWorkflowsIn(STATEMACHINES_DIR);

/**
 * Run a workflow's eval cases (`statemachines/<workflow>/evals/*.yaml`) in one local session.
 * @default options.model 'offline'
 */
export function evalWorkflow(workflow: string, options: EvalRunOptions = {}): Promise<EvalReport> {
  return runEvalCases(workflow, loadEvalCases(loadWorkflow(workflow).dir), {
    session: { logLevel: 'SILENT' },
    ...options,
  });
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
export async function replayLifecycle(
  lifecycle: string,
  file: string,
  options: Omit<LifecycleSessionOptions, 'lifecycle'> = {},
): Promise<LifecycleReplay> {
  const session = await LifecycleSession.start({ ...options, lifecycle });
  try {
    const parsed = parseReplayFile(readFileSync(file, 'utf8'), session.definition);
    await session.replay(parsed.timeline, { clock: parsed.timeline.length > parsed.events.length });
    return {
      entities: await entityStatuses(session.store, session.definition),
      failures: failuresOf(session),
      malformed: parsed.malformed,
    };
  } finally {
    await session.stop();
  }
}
