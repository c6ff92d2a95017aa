import type { StepDefinition, WorkflowDefinition } from '../../definitions/workflow/schema.ts';
import type { DecidedBy, StepInput, TokenUsage, ToolCallRecord } from '../contracts/step.ts';
import type { ModelTranscript } from '../contracts/transcript.ts';
import type { CallContext, Toolbox, ToolSpec } from '../tools/types.ts';

/** What a step decided: the runner's and every code step's result. The handler turns it into a `StepOutput`. */
export interface StepResult {
  /** A declared edge of the step (or `DONE`). */
  next: string;
  reason: string;
  decidedBy: DecidedBy;
  /** The step's declared outputs; merged into `data` for later steps. */
  fields: Record<string, unknown>;
  /** The text the step sent to the outside (a reply), when it sent one. */
  reply?: string;
  toolCalls: ToolCallRecord[];
  usage: TokenUsage;
  /** LLM steps: the model request and response (bounded). */
  transcript?: ModelTranscript;
  /** A map or parallel step: the steps its longest item or branch ran, counted after it. */
  innerSteps?: number;
}

/**
 * Everything a code step gets.
 *
 * Where a code step finds data (`input` is the step's {@link StepInput}):
 * - `input.input`: the execution input, all of it (a code step is trusted code: the fields the
 *   manifest marks untrusted are here too; an email workflow's `email` is the ingress record, whose
 *   body is in the emails table);
 * - `input.previous.data`: everything earlier steps produced, their declared `outputs` merged in
 *   order (a later step's value of a name replaces an earlier one), e.g. `input.previous.data.serialNumber`;
 *   values offloaded for size are read back, so a step sees values, never pointers;
 * - `input.previous.fields`, `.step`, `.next`, `.reason`: the previous step's own outputs and route;
 * - `input.previous.data.checkpoint`: what the resumer sent at a `pause` of an earlier step;
 * - `input.error`: the error caught from the previous step (`{ Error, Cause }`), in the fallback;
 * - `input.counters`: the manifest's counters, after this step's increment or reset.
 *
 * @example
 * export default defineCodeStep(async ({ input }) => {
 *   const serial = input.previous.data.serialNumber as string | undefined;
 *   return { next: serial ? '02-check' : '03-ask', reason: serial ? 'Serial given' : 'No serial', decidedBy: 'code', fields: {}, toolCalls: [], usage: NO_USAGE };
 * });
 */
export interface StepContext {
  def: WorkflowDefinition;
  step: StepDefinition;
  /**
   * The step input: `input.input` is the execution input, `input.previous.data` what earlier steps produced (see {@link
   * StepContext}).
   */
  input: StepInput;
  /** Already restricted to the step's allow-list. */
  toolbox: Toolbox;
  tool: CallContext;
}

/** The caller identity tools see: derived from the execution, never from model output. */
export function toolContext(input: StepInput, remainingTimeMs?: () => number): CallContext {
  return {
    workflow: input.workflow,
    step: input.step,
    execution: input.execution,
    input: input.input,
    ...(remainingTimeMs ? { remainingTimeMs } : {}),
    ...(input.item && { item: `${input.item.map}#${input.item.index}` }),
  };
}

/**
 * A deterministic step: same contract as an LLM step, no model. The default export of
 * `lambdas/workflows/<workflow>/steps/<handler>.ts`.
 */
export type CodeStep = (ctx: StepContext) => Promise<StepResult>;

/** Type helper for code step modules. */
export const defineCodeStep = (step: CodeStep): CodeStep => step;

export const NO_USAGE: TokenUsage = Object.freeze({
  modelCalls: 0,
  inputTokens: 0,
  outputTokens: 0,
  cacheReadInputTokens: 0,
  cacheWriteInputTokens: 0,
});

/** Model use added up (samples of a step, steps of an execution); a missing one counts nothing. */
export function sumUsage(usages: Iterable<TokenUsage | undefined>): TokenUsage {
  const total = { ...NO_USAGE };
  for (const usage of usages)
    if (usage) for (const key of Object.keys(total) as (keyof TokenUsage)[]) total[key] += usage[key];
  return total;
}

/**
 * A side-effecting call that did nothing: the toolbox returned the result of an earlier call (see
 * `ToolDefinition.idempotency`).
 */
export function isReplay(call: ToolCallRecord): boolean {
  return (call.result as { replayed?: unknown } | undefined)?.replayed === true;
}

/**
 * The text a step sent to the outside: the `replyArg` argument of its last successful call of a
 * tool that declares one (`send_email`'s `body`). A replayed call sent nothing, so it is no reply.
 */
export function sentReply(
  toolCalls: ToolCallRecord[],
  spec: (name: string) => Pick<ToolSpec, 'replyArg'> | undefined,
): string | undefined {
  const sent = toolCalls
    .filter((c) => c.error === undefined && !isReplay(c) && spec(c.tool)?.replyArg !== undefined)
    .at(-1);
  const text = sent?.args[spec(sent.tool)!.replyArg!];
  return typeof text === 'string' ? text : undefined;
}
