/**
 * What happened to one input of a workflow session, as `stepwise run --json` reports it: an
 * execution's history turned into its steps (route, decider, fields, model use, errors), tool
 * calls, sent mail, outcome and output, or the checkpoint it paused at.
 */

import { causeMessage } from '../../core/errors.ts';
import { type CheckpointRequest, pauseStateName, requiredActions } from '../../definitions/workflow/pause.ts';
import type { WorkflowDefinition } from '../../definitions/workflow/schema.ts';
import type { DecidedBy, StepOutput, TokenUsage } from '../../runtime/contracts/step.ts';
import { sumUsage } from '../../runtime/steps/types.ts';
import type { LocalExecution } from '../asl/runtime.ts';
import { stepTrail, type TrailStep } from '../records/history.ts';
import { deadline, type PausedTask } from '../records/pauses.ts';

/**
 * - `SUCCEEDED` / `FAILED`: the execution's status (timed out and aborted count as failed).
 * - `REJECTED`: the input was refused before anything ran (the email ingress refused the mail, or
 *   the input does not match the workflow's input schema); `reason` says why.
 * - `DUPLICATE`: a mail with the same Message-ID was already delivered in this session; nothing ran.
 * - `PAUSED`: the execution waits at a checkpoint (a step's `pause`) for `stepwise resume`; see `pause`.
 */
export type RunStatus = 'SUCCEEDED' | 'FAILED' | 'REJECTED' | 'DUPLICATE' | 'PAUSED';

/** One step of an execution's trail. */
export interface RunStep {
  name: string;
  /** The route the step chose; `null` when it failed. */
  next: string | null;
  decidedBy: DecidedBy | null;
  fields: Record<string, unknown>;
  /** Model calls and tokens of the step (zero for code steps); absent when it failed. */
  usage?: TokenUsage;
  /**
   * Why the step failed (`<error name>: <message>`), when it did: the ASL caught it (to the fallback) or the execution
   * ended.
   */
  error?: string;
  /** ASL retries of the step (attempts after the first), when there were any. */
  retries?: number;
}

export interface RunToolCall {
  step: string;
  tool: string;
  args: Record<string, unknown>;
  /** `null` when the call was refused or failed. */
  result: unknown;
  /** Why the call was refused (not allowed, bad arguments) or failed. */
  error?: string;
}

export interface OutboxMail {
  to: string;
  subject: string;
  body: string;
}

/** What happened to one input: the `stepwise run --json` contract (one object per input). */
export interface RunResult {
  file: string;
  /** Email inputs: the Message-ID header; `null` when the mail has none or could not be read. */
  messageId?: string | null;
  /** The execution; for a duplicate mail, the earlier one. `null` when nothing was started. */
  executionName: string | null;
  status: RunStatus;
  reason?: string;
  steps: RunStep[];
  /**
   * The named outcome a succeeded execution ended in instead of `Done` (a manifest counter's, e.g. `IterationLimit`).
   */
  outcome?: string;
  toolCalls: RunToolCall[];
  /** Messages this execution sent (for an email workflow: to the verified sender only). */
  outbox: OutboxMail[];
  /** Model calls and tokens of the whole execution; present when it ran. */
  usage?: TokenUsage;
  /** The execution's output, when it succeeded. */
  output?: unknown;
  /** A `PAUSED` execution's checkpoint: what the resumer must do, and until when. */
  pause?: PauseSummary;
}

/** What `run`, `resume` and `executions` show of a paused execution. */
export function pauseSummary(task: PausedTask): PauseSummary {
  const request = (task.request ?? {}) as Partial<CheckpointRequest>;
  const due = deadline(task);
  return {
    execution: task.name,
    workflow: task.workflow ?? request.workflow ?? null,
    state: task.state,
    ...(typeof request.step === 'string' && { step: request.step }),
    ...(typeof request.next === 'string' && { next: request.next }),
    requiredActions: requiredActions(request),
    pausedAt: task.pausedAt,
    deadline: due?.at.toISOString() ?? null,
    resume: `stepwise resume ${task.name} --output '<JSON>'   (or --fail REASON)`,
  };
}

export interface PauseSummary {
  execution: string;
  workflow: string | null;
  /** The paused Task state (`<step>.pause`). */
  state: string;
  step?: string;
  next?: string;
  requiredActions: unknown;
  pausedAt: string;
  /** When it times out (the earlier of the timeout and the next heartbeat due), if it can. */
  deadline: string | null;
  resume: string;
}

/** `<error name>: <first line of the cause's message>`, or the error name alone. */
export const describeError = (error: string, cause: string | undefined): string => {
  const message = causeMessage(cause)?.split('\n')[0];
  return message ? `${error}: ${message}` : error;
};

/** A step Lambda's output, when the trail step has one. */
const stepOutput = (step: TrailStep): StepOutput | undefined =>
  step.output && typeof step.output === 'object' && 'toolCalls' in step.output
    ? (step.output as StepOutput)
    : undefined;

function runSteps(trail: TrailStep[]): RunStep[] {
  return trail.map((step) => {
    const out = stepOutput(step);
    return {
      name: step.name,
      next: out?.next ?? null,
      decidedBy: out?.decidedBy ?? null,
      fields: out?.fields ?? {},
      ...(out?.usage && { usage: out.usage }),
      ...(step.error && { error: describeError(step.error.error, step.error.cause) }),
      ...(step.retries > 0 && { retries: step.retries }),
    };
  });
}

function runToolCalls(trail: TrailStep[]): RunToolCall[] {
  return trail.flatMap((step) =>
    (stepOutput(step)?.toolCalls ?? []).map((call) => ({
      step: step.name,
      tool: call.tool,
      args: call.args,
      result: call.result ?? null,
      ...(call.error !== undefined && { error: call.error }),
    })),
  );
}

/**
 * The trail of a workflow's steps: Task states named as a step. A consensus step's samples and
 * tallies (Tasks inside its Map states, named `<step>.wave-N…`) are not steps: the step's own
 * Task records the vote and the samples' model use. A step's checkpoint (`<step>.pause`) stays in
 * the trail, so a paused or resumed run shows where it waited.
 */
export function workflowTrail(def: WorkflowDefinition, history: LocalExecution['history']): TrailStep[] {
  const shown = new Set(def.steps.flatMap((s) => (s.pause ? [s.name, pauseStateName(s.name)] : [s.name])));
  return stepTrail(history).filter((s) => shown.has(s.name));
}

/**
 * The named outcome a succeeded execution reached, when it is not `Done`: the terminal state it
 * ended in (a counter's outcome, e.g. `IterationLimit`), or a counter outcome it passed through on
 * its way to the step that answers it (counter `then`).
 */
function outcomeOf(def: WorkflowDefinition, history: LocalExecution['history']): string | undefined {
  const name = history.findLast((e) => e.type === 'SucceedStateEntered')?.stateEnteredEventDetails?.name;
  if (name !== undefined && name !== 'Done') return name;
  const answered = new Set(Object.values(def.manifest.counters).flatMap((c) => (c.then ? [c.outcome] : [])));
  return history.findLast((e) => e.type === 'PassStateEntered' && answered.has(e.stateEnteredEventDetails?.name ?? ''))
    ?.stateEnteredEventDetails?.name;
}

/** The model use of an execution: every step's, added up. */
export const executionUsage = (steps: readonly RunStep[]): TokenUsage => sumUsage(steps.map((s) => s.usage));

/** Why an execution failed: its error, and the failing step's message when the terminal state has none. */
function failureReason(execution: LocalExecution, trail: TrailStep[]): string {
  const error = execution.error?.Error ?? execution.status;
  const cause = execution.error?.Cause ?? trail.findLast((s) => s.error)?.error?.cause;
  return describeError(error, cause);
}

/**
 * One finished (or paused) execution of `workflow` as the result of input `file`: `sent` are the
 * mails it sent, `messageId` the Message-ID of the mail that started it (email inputs only).
 */
export function executionResult(
  workflow: WorkflowDefinition,
  input: { file: string; execution: LocalExecution; sent: readonly OutboxMail[]; messageId?: string | null },
): RunResult {
  const { file, execution, sent, messageId } = input;
  const trail = workflowTrail(workflow, execution.history);
  const succeeded = execution.status === 'SUCCEEDED';
  const steps = runSteps(trail);
  const paused = execution.status === 'RUNNING' && execution.pause;
  const outcome = succeeded ? outcomeOf(workflow, execution.history) : undefined;
  return {
    file,
    ...(messageId !== undefined && { messageId }),
    executionName: execution.name,
    status: paused ? 'PAUSED' : succeeded ? 'SUCCEEDED' : 'FAILED',
    ...(paused ? { pause: pauseSummary(paused) } : !succeeded && { reason: failureReason(execution, trail) }),
    steps,
    toolCalls: runToolCalls(trail),
    outbox: sent.map(({ to, subject, body }) => ({ to, subject, body })),
    usage: executionUsage(steps),
    ...(outcome !== undefined && { outcome }),
    ...(succeeded && execution.output !== undefined && { output: execution.output }),
  };
}
