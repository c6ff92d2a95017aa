import * as z from 'zod';
import { InvalidModelOutputError } from '../../core/errors.ts';

/**
 * The model port: the subset of the Bedrock Converse API that steps use. Adapters: `bedrock`
 * (the real API) and `offline` (a deterministic stand-in, not an LLM). Types mirror the Converse
 * wire shapes so the Bedrock adapter passes them through unchanged.
 */

/** A block of the system prompt. A `cachePoint` marks the end of the static (cacheable) prefix. */
export type SystemBlock = { text: string } | { cachePoint: { type: 'default' } };

/** Tool result content: Converse accepts text or JSON documents. */
export type ToolResultContent = { text: string } | { json: unknown };

export type ContentBlock =
  | { text: string }
  | { toolUse: { toolUseId: string; name: string; input: unknown } }
  | { toolResult: { toolUseId: string; content: ToolResultContent[]; status?: 'success' | 'error' } };

export interface Message {
  role: 'user' | 'assistant';
  content: ContentBlock[];
}

export interface ToolSpecification {
  name: string;
  description: string;
  /** JSON Schema of the tool input. */
  inputSchema: { json: Record<string, unknown> };
}

/** `auto`: the model may answer without a tool; `any`: it must call one; `tool`: it must call this one. */
export type ToolChoice = { auto: Record<string, never> } | { any: Record<string, never> } | { tool: { name: string } };

export interface ToolConfiguration {
  tools: { toolSpec: ToolSpecification }[];
  toolChoice?: ToolChoice;
}

export interface InferenceConfiguration {
  maxTokens?: number;
  temperature?: number;
  topP?: number;
  stopSequences?: string[];
}

/** A Converse request without `modelId`: each adapter pins its own model. */
export interface ConverseRequest {
  system: SystemBlock[];
  messages: Message[];
  toolConfig?: ToolConfiguration;
  inferenceConfig?: InferenceConfiguration;
}

export const STOP_REASONS = [
  'end_turn',
  'tool_use',
  'max_tokens',
  'stop_sequence',
  'guardrail_intervened',
  'content_filtered',
  'malformed_model_output',
  'malformed_tool_use',
  'model_context_window_exceeded',
] as const;
export type StopReason = (typeof STOP_REASONS)[number];

export interface ConverseUsage {
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
  cacheReadInputTokens?: number;
  cacheWriteInputTokens?: number;
}

export interface ConverseResponse {
  output: { message: Message & { role: 'assistant' } };
  stopReason: StopReason;
  usage: ConverseUsage;
}

/** A model that answers Converse requests. Errors are the typed errors of `src/core/errors.ts`. */
export interface ConverseOptions {
  /**
   * Aborts the call (it then fails with `ModelTimeoutError`): the step runner bounds each call by the Lambda's
   * remaining time.
   */
  signal?: AbortSignal;
}

/** The providers: `replay` answers from a recording of one of the others (`stepwise eval --replay`). */
export type ProviderName = 'bedrock' | 'offline' | 'openai' | 'replay';

export interface ModelProvider {
  /** Logged with every step so an offline run is never mistaken for an LLM run. */
  readonly name: ProviderName;
  /** The model it calls (a Bedrock model id, an OpenAI-compatible model name); the offline stand-in has none. */
  readonly modelId?: string;
  converse(request: ConverseRequest, options?: ConverseOptions): Promise<ConverseResponse>;
  /**
   * The same provider calling another model (a step's panel, `models`). @default this provider (the offline stand-in is
   * one)
   */
  forModel?(modelId: string): ModelProvider;
}

const ToolResultContentSchema = z.union([z.object({ text: z.string() }), z.object({ json: z.unknown() })]);

/** One content block. Block kinds steps never use (images, reasoning, citations) fail validation. */
const ContentBlockSchema = z.union([
  z.object({ text: z.string() }).strict(),
  z
    .object({ toolUse: z.object({ toolUseId: z.string().min(1), name: z.string().min(1), input: z.unknown() }) })
    .strict(),
  z
    .object({
      toolResult: z.object({
        toolUseId: z.string().min(1),
        content: z.array(ToolResultContentSchema),
        status: z.enum(['success', 'error']).optional(),
      }),
    })
    .strict(),
]);

const count = z.number().int().nonnegative();

/** The response shape every adapter must produce; checked at the edge, before the runner reads it. */
export const ConverseResponseSchema = z.object({
  output: z.object({
    message: z.object({ role: z.literal('assistant'), content: z.array(ContentBlockSchema) }),
  }),
  stopReason: z.enum(STOP_REASONS),
  usage: z.object({
    inputTokens: count,
    outputTokens: count,
    totalTokens: count,
    cacheReadInputTokens: count.optional(),
    cacheWriteInputTokens: count.optional(),
  }),
});

/** Validate a provider's raw response; a malformed one is a permanent `InvalidModelOutputError`. */
export function parseConverseResponse(raw: unknown, provider: string): ConverseResponse {
  const parsed = ConverseResponseSchema.safeParse(raw);
  if (parsed.success) return parsed.data as ConverseResponse;
  const issue = parsed.error.issues[0]!;
  throw new InvalidModelOutputError(
    `${provider} returned a malformed Converse response at ${issue.path.join('.') || '(root)'}: ${issue.message}`,
  );
}
