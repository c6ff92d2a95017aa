/**
 * What crosses between a workflow's states and its step Lambdas, read by the compiler (src/cdk),
 * the step handler and the local runtime (src/local). The ASL the compiler emits passes a
 * `StepInput` to every step's Lambda and keeps the `StepOutput` (through a ResultSelector) at
 * `$.result`.
 */

import type { ModelTranscript } from './transcript.ts';

/**
 * Who made a routing decision: the model's `route` tool call, the `NEXT_STEP:` text fallback, deterministic code, or
 * the offline stand-in.
 */
export type DecidedBy = 'model' | 'model-text' | 'code' | 'offline';

/** Model use of a step or an execution: calls, and tokens as Bedrock reports them. */
export interface TokenUsage {
  modelCalls: number;
  inputTokens: number;
  outputTokens: number;
  cacheReadInputTokens: number;
  cacheWriteInputTokens: number;
}

export interface ToolCallRecord {
  tool: string;
  args: Record<string, unknown>;
  result?: unknown;
  /** Set when the call was refused (not allowed, bad args) or failed. */
  error?: string;
  /** The output guard's verdicts on this call (guarded steps only; see src/runtime/steps/guard.ts). */
  guard?: GuardVerdict[];
}

/** One rule checked against outgoing text: which rule, by which lane, whether it held, and what broke it. */
export interface GuardVerdict {
  check: string;
  lane: 'deterministic' | 'judge';
  passed: boolean;
  /** What broke the rule (link hosts, phone numbers, echoed words, variables). */
  found?: string[];
  message?: string;
}

/** What the state carries at `$.result` between steps (the ResultSelector keeps exactly these keys). */
export interface StepState {
  /** The step that produced this result (`null` before the first step). */
  step: string | null;
  /** The route the step chose; the Choice state after the step validates it against the declared edges. */
  next: string;
  reason: string;
  decidedBy: DecidedBy | null;
  /** This step's structured outputs (declared in its frontmatter `outputs`). */
  fields: Record<string, unknown>;
  /** Everything earlier steps produced, merged (e.g. a serial number, then the lookup result, then a ticket id) */
  data: Record<string, unknown>;
  /** Steps executed so far, including this one (the circuit breaker reads it). */
  count: number;
}

/** The payload the compiled Task state sends to a step's Lambda. */
export interface StepInput {
  workflow: string;
  step: string;
  /** The execution input as its trigger started it (checked against the workflow's input schema). */
  input: Record<string, unknown>;
  /** `$.result` as the previous step left it: `previous.data` holds what every earlier step produced. */
  previous: StepState;
  /** The error caught from the previous step (Catch → fallback), otherwise null. */
  error: { Error: string; Cause: string } | null;
  /** `previous.count + 1`, computed in the ASL with States.MathAdd. */
  count: number;
  execution: { id: string; name: string };
  /** The manifest's counters (`$.counters`), when it declares any. */
  counters?: Record<string, number>;
  /** A step inside the items of a map step: which map and which item (side effects are idempotent per item). */
  item?: { map: string; index: number };
}

/** What a step's Lambda returns. */
export interface StepOutput extends StepState {
  step: string;
  decidedBy: DecidedBy;
  reply?: string;
  toolCalls: ToolCallRecord[];
  usage: TokenUsage;
  durationMs: number;
  /**
   * LLM steps that called the model: the request (system prompt, messages, tool configuration) and
   * every response, bounded (src/runtime/steps/transcript.ts). Not in the state: the history keeps it.
   */
  transcript?: ModelTranscript;
  /** Consensus steps: how the samples voted (see src/runtime/steps/consensus.ts). */
  consensus?: {
    samples: number;
    discarded: { sample: number; why: string }[];
    votes: { next: string; value: unknown; count: number }[];
    earlyExit: boolean;
  };
}
