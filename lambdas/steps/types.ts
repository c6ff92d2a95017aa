import type { DecidedBy, StepInput, TokenUsage, ToolCallRecord } from '../lib/contracts.ts';
import type { StepDefinition, WorkflowDefinition } from '../lib/workflow/schema.ts';
import type { InboundEmail, Toolbox, ToolContext } from '../tools/types.ts';

/** What a step decided: the runner's and every code step's result. The handler turns it into a `StepOutput`. */
export interface StepResult {
  /** A declared edge of the step (or `DONE`). */
  next: string;
  reason: string;
  decidedBy: DecidedBy;
  /** The step's declared outputs; merged into `data` for later steps. */
  fields: Record<string, unknown>;
  /** The text sent to the customer, when the step sent one. */
  reply?: string;
  toolCalls: ToolCallRecord[];
  usage: TokenUsage;
}

/** Everything a code step gets. */
export interface StepContext {
  def: WorkflowDefinition;
  step: StepDefinition;
  input: StepInput;
  /** The verified ingress record (`input.email`), parsed. */
  email: InboundEmail;
  /** Already restricted to the step's allow-list. */
  toolbox: Toolbox;
  tool: ToolContext;
}

/** The caller identity tools see: derived from the execution, never from model output. */
export function toolContext(input: StepInput, email: InboundEmail, remainingTimeMs?: () => number): ToolContext {
  return { workflow: input.workflow, step: input.step, execution: input.execution, email, ...(remainingTimeMs ? { remainingTimeMs } : {}) };
}

/** A deterministic step: same contract as an LLM step, no model. */
export type CodeStep = (ctx: StepContext) => Promise<StepResult>;

export const NO_USAGE: TokenUsage = Object.freeze({ inputTokens: 0, outputTokens: 0, cacheReadInputTokens: 0, cacheWriteInputTokens: 0 });

/** The framework tool that writes to the customer; its `body` argument is a step's `reply`. */
export const REPLY_TOOL = 'send_email';

/** A side-effecting call that did nothing: the toolbox returned the result of an earlier call (see `ToolSpec.idempotency`). */
export function isReplay(call: ToolCallRecord): boolean {
  return (call.result as { replayed?: unknown } | undefined)?.replayed === true;
}

/**
 * The reply a step sent: the body of its last successful `send_email` call. A replayed call sent
 * nothing (the execution had already replied), so its body is not a reply.
 */
export function sentReply(toolCalls: ToolCallRecord[]): string | undefined {
  const sent = toolCalls.filter((c) => c.tool === REPLY_TOOL && c.error === undefined && !isReplay(c)).at(-1);
  return typeof sent?.args.body === 'string' ? sent.args.body : undefined;
}
