/**
 * The `openai` model provider: any OpenAI-compatible chat-completions endpoint (Ollama, vLLM, the
 * llama.cpp server, LM Studio, or a hosted one) behind the Converse-shaped port. It maps the
 * request (system blocks, tool use and tool results, tool choice, inference settings) to
 * `POST {baseUrl}/chat/completions` with streaming off, and the answer back (content and tool
 * calls as blocks, `finish_reason` as the stop reason, usage incl. cached prompt tokens), so the
 * step runner cannot tell it from Bedrock. Errors become the typed errors the ASL retries or
 * catches, exactly as the Bedrock adapter's do.
 */
import * as z from 'zod';
import {
  InvalidModelOutputError,
  ModelRequestError,
  ModelThrottledError,
  ModelTimeoutError,
} from '../../core/errors.ts';
import {
  type ContentBlock,
  type ConverseOptions,
  type ConverseRequest,
  type ConverseResponse,
  type Message,
  type ModelProvider,
  parseConverseResponse,
  type StopReason,
  type ToolChoice,
} from '../contracts/model-port.ts';

export interface OpenAiModelOptions {
  /** The API root, e.g. `http://localhost:11434/v1` (Ollama) or `https://api.openai.com/v1`. */
  readonly baseUrl: string;
  /** The model name the endpoint serves (`llama3.1:8b`, `Qwen/Qwen2.5-7B-Instruct`). */
  readonly model: string;
  /** Sent as `Authorization: Bearer <key>` when set (local servers need none). */
  readonly apiKey?: string;
  /** Output token cap when the request sets none. */
  readonly maxTokens: number;
  /** Milliseconds before the call fails with `ModelTimeoutError`. @default 60000 */
  readonly timeoutMs?: number;
  /** @default globalThis.fetch */
  readonly fetch?: typeof fetch;
}

type ChatMessage =
  | { role: 'system' | 'user'; content: string }
  | { role: 'assistant'; content: string | null; tool_calls?: ToolCall[] }
  | { role: 'tool'; tool_call_id: string; content: string };
interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

/** The response fields the adapter reads (the rest of the document is ignored). */
const ChatResponse = z.object({
  choices: z
    .array(
      z.object({
        message: z.object({
          content: z.string().nullable().optional(),
          tool_calls: z
            .array(
              z.object({
                id: z.string().optional(),
                function: z.object({
                  name: z.string(),
                  arguments: z.union([z.string(), z.record(z.string(), z.unknown())]),
                }),
              }),
            )
            .nullable()
            .optional(),
        }),
        finish_reason: z.string().nullable().optional(),
      }),
    )
    .min(1),
  usage: z
    .object({
      prompt_tokens: z.number().int().nonnegative(),
      completion_tokens: z.number().int().nonnegative(),
      total_tokens: z.number().int().nonnegative().optional(),
      prompt_tokens_details: z
        .object({ cached_tokens: z.number().int().nonnegative().optional() })
        .nullable()
        .optional(),
    })
    .optional(),
});

const STOP: Record<string, StopReason> = {
  stop: 'end_turn',
  tool_calls: 'tool_use',
  function_call: 'tool_use',
  length: 'max_tokens',
  content_filter: 'content_filtered',
};

const text = (blocks: ContentBlock[]) => blocks.flatMap((b) => ('text' in b ? [b.text] : [])).join('\n');

/** Converse messages as chat messages: tool results become `tool` messages, before the text of the same turn. */
export function chatMessages(request: ConverseRequest): ChatMessage[] {
  const system = request.system.flatMap((b) => ('text' in b ? [b.text] : [])).join('\n\n');
  const out: ChatMessage[] = system ? [{ role: 'system', content: system }] : [];
  for (const message of request.messages) out.push(...chatMessage(message));
  return out;
}

function chatMessage(message: Message): ChatMessage[] {
  if (message.role === 'assistant') {
    const calls: ToolCall[] = message.content.flatMap((b) =>
      'toolUse' in b
        ? [
            {
              id: b.toolUse.toolUseId,
              type: 'function' as const,
              function: { name: b.toolUse.name, arguments: JSON.stringify(b.toolUse.input ?? {}) },
            },
          ]
        : [],
    );
    return [{ role: 'assistant', content: text(message.content) || null, ...(calls.length && { tool_calls: calls }) }];
  }
  const results: ChatMessage[] = message.content.flatMap((b) =>
    'toolResult' in b
      ? [
          {
            role: 'tool' as const,
            tool_call_id: b.toolResult.toolUseId,
            content: b.toolResult.content.map((c) => ('text' in c ? c.text : JSON.stringify(c.json))).join('\n'),
          },
        ]
      : [],
  );
  const said = text(message.content);
  return [...results, ...(said ? [{ role: 'user' as const, content: said }] : [])];
}

function toolChoice(choice: ToolChoice | undefined): unknown {
  if (!choice || 'auto' in choice) return 'auto';
  if ('any' in choice) return 'required';
  return { type: 'function', function: { name: choice.tool.name } };
}

/** The chat-completions request body for a Converse request (streaming off, temperature 0 unless set). */
export function chatRequest(request: ConverseRequest, model: string, maxTokens: number): Record<string, unknown> {
  const inference = request.inferenceConfig ?? {};
  const tools = request.toolConfig?.tools.map(({ toolSpec }) => ({
    type: 'function',
    function: { name: toolSpec.name, description: toolSpec.description, parameters: toolSpec.inputSchema.json },
  }));
  return {
    model,
    messages: chatMessages(request),
    stream: false,
    max_tokens: inference.maxTokens ?? maxTokens,
    temperature: inference.temperature ?? 0,
    ...(inference.topP !== undefined && { top_p: inference.topP }),
    ...(inference.stopSequences?.length && { stop: inference.stopSequences }),
    ...(tools?.length && { tools, tool_choice: toolChoice(request.toolConfig?.toolChoice) }),
  };
}

/** A tool call's arguments: JSON text as the wire format says (some servers send an object). */
function toolInput(args: string | Record<string, unknown>, provider: string): unknown {
  if (typeof args !== 'string') return args;
  if (args.trim() === '') return {};
  try {
    return JSON.parse(args);
  } catch {
    throw new InvalidModelOutputError(
      `${provider} returned tool call arguments that are not JSON: ${args.slice(0, 120)}`,
    );
  }
}

/** The chat-completions answer as a Converse response (validated at the edge like every adapter's). */
export function converseResponse(raw: unknown, provider: string): ConverseResponse {
  const parsed = ChatResponse.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new InvalidModelOutputError(
      `${provider} returned a malformed chat completion at ${issue.path.join('.') || '(root)'}: ${issue.message}`,
    );
  }
  const { choices, usage } = parsed.data;
  const choice = choices[0]!;
  const content: ContentBlock[] = [];
  if (choice.message.content) content.push({ text: choice.message.content });
  for (const [i, call] of (choice.message.tool_calls ?? []).entries())
    content.push({
      toolUse: {
        toolUseId: call.id ?? `call-${i + 1}`,
        name: call.function.name,
        input: toolInput(call.function.arguments, provider),
      },
    });
  const stopReason = content.some((b) => 'toolUse' in b)
    ? 'tool_use'
    : (STOP[choice.finish_reason ?? 'stop'] ?? 'end_turn');
  const input = usage?.prompt_tokens ?? 0;
  const output = usage?.completion_tokens ?? 0;
  const cached = usage?.prompt_tokens_details?.cached_tokens;
  return parseConverseResponse(
    {
      output: { message: { role: 'assistant', content } },
      stopReason,
      usage: {
        inputTokens: input,
        outputTokens: output,
        totalTokens: usage?.total_tokens ?? input + output,
        ...(cached !== undefined && { cacheReadInputTokens: cached }),
      },
    },
    provider,
  );
}

/** Seconds to wait that a `retry-after` header gives (seconds, or an HTTP date). */
export function retryAfterSeconds(header: string | null, now: Date = new Date()): number | undefined {
  if (!header) return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds)) return Math.max(0, seconds);
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now.getTime()) / 1000));
}

/** A throttled call: `retryAfterSeconds` is what the endpoint asked for (the ASL's backoff does the waiting). */
export class OpenAiThrottledError extends ModelThrottledError {
  constructor(
    message: string,
    readonly retryAfterSeconds: number | undefined,
  ) {
    super(message);
    // ASL Retry matches ModelThrottledError by name: keep it.
    this.name = ModelThrottledError.name;
  }
}

/**
 * Map an HTTP failure to the typed errors: 429 → `ModelThrottledError` (with `retry-after`); 408,
 * 5xx → `ModelTimeoutError` (both retried by the ASL); any other status → `ModelRequestError`
 * (permanent: bad request, unknown model, missing key). The endpoint's error message is kept.
 */
export function classifyHttpError(status: number, body: string, retryAfter: string | null, provider: string): Error {
  let detail = body.slice(0, 300);
  try {
    const parsed = JSON.parse(body) as { error?: { message?: unknown; type?: unknown; code?: unknown } | string };
    const err = parsed.error;
    if (typeof err === 'string') detail = err;
    else if (err && typeof err.message === 'string') detail = `${err.type ?? err.code ?? 'error'}: ${err.message}`;
  } catch {
    // Not JSON: the text as it came.
  }
  const message = `${provider} failed: HTTP ${status}: ${detail}`;
  if (status === 429) {
    const wait = retryAfterSeconds(retryAfter);
    return new OpenAiThrottledError(`${message}${wait !== undefined ? ` (retry after ${wait}s)` : ''}`, wait);
  }
  if (status === 408 || status >= 500) return new ModelTimeoutError(message);
  return new ModelRequestError(message);
}

/**
 * @example
 * const model = new OpenAiModel({ baseUrl: 'http://localhost:11434/v1', model: 'llama3.1:8b', maxTokens: 1024 });
 */
export class OpenAiModel implements ModelProvider {
  readonly name = 'openai' as const;
  readonly modelId: string;
  private readonly label: string;

  constructor(private readonly options: OpenAiModelOptions) {
    this.modelId = options.model;
    this.label = `openai ${options.model} at ${options.baseUrl}`;
  }

  forModel(model: string): OpenAiModel {
    return new OpenAiModel({ ...this.options, model });
  }

  async converse(request: ConverseRequest, options: ConverseOptions = {}): Promise<ConverseResponse> {
    const signals = [
      AbortSignal.timeout(this.options.timeoutMs ?? 60_000),
      ...(options.signal ? [options.signal] : []),
    ];
    let response: Response;
    try {
      response = await (this.options.fetch ?? fetch)(`${this.options.baseUrl.replace(/\/+$/, '')}/chat/completions`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(this.options.apiKey && { authorization: `Bearer ${this.options.apiKey}` }),
        },
        body: JSON.stringify(chatRequest(request, this.options.model, this.options.maxTokens)),
        signal: AbortSignal.any(signals),
      });
    } catch (error) {
      // Aborted, timed out, refused or reset before an answer: transient.
      throw new ModelTimeoutError(`${this.label} failed: ${(error as Error).name}: ${(error as Error).message}`, {
        cause: error,
      });
    }
    const body = await response.text().catch((e: Error) => {
      throw new ModelTimeoutError(`${this.label} failed reading the answer: ${e.message}`, { cause: e });
    });
    if (!response.ok) throw classifyHttpError(response.status, body, response.headers.get('retry-after'), this.label);
    let raw: unknown;
    try {
      raw = JSON.parse(body);
    } catch {
      throw new InvalidModelOutputError(`${this.label} answered with a body that is not JSON: ${body.slice(0, 120)}`);
    }
    return converseResponse(raw, this.label);
  }
}
