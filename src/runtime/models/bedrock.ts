import type {
  BedrockRuntimeClient,
  BedrockRuntimeClientConfig,
  ConverseCommandInput,
  ConverseCommandOutput,
} from '@aws-sdk/client-bedrock-runtime';
import { ModelRequestError, ModelThrottledError, ModelTimeoutError } from '../../core/errors.ts';
import {
  type ConverseOptions,
  type ConverseRequest,
  type ConverseResponse,
  type ModelProvider,
  parseConverseResponse,
} from '../contracts/model-port.ts';
import type { ClientTracer } from '../observability.ts';

export interface BedrockModelOptions {
  /** The pinned model (or inference profile) id, e.g. `anthropic.claude-3-5-haiku-20241022-v1:0`. */
  readonly modelId: string;
  /** Output token cap when the request does not set one. */
  readonly maxTokens: number;
  readonly region?: string;
  /** Endpoint override (a local Converse server in tests). @default the regional Bedrock endpoint */
  readonly endpoint?: string;
  /** Milliseconds without response activity before the call fails with `ModelTimeoutError`. @default 60000 */
  readonly timeoutMs?: number;
  /**
   * SDK attempts per call. @default 1 — the compiled ASL owns retries (backoff + jitter, visible in
   * the execution history); SDK retries inside the Lambda would multiply them and hide throttling.
   */
  readonly maxAttempts?: number;
  readonly credentials?: BedrockRuntimeClientConfig['credentials'];
  /** Makes each Converse call an X-Ray subsegment. @default untraced */
  readonly tracer?: ClientTracer;
}

/** Service errors Bedrock documents as transient (`ModelNotReadyException` is a 429 that means "warming up"). */
const TRANSIENT_SERVICE_ERRORS = new Set([
  'ModelNotReadyException',
  'ModelTimeoutException',
  'ServiceUnavailableException',
  'InternalServerException',
  'ModelErrorException',
]);
/** Errors raised before any response arrived: the SDK's own timeouts and network failures. */
const TRANSPORT_ERRORS = new Set(['TimeoutError', 'AbortError', 'RequestTimeout', 'RequestTimeoutException']);
const NETWORK_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ERR_HTTP2_STREAM_ERROR',
]);

/**
 * Map an SDK error to the typed errors the ASL matches: throttling → `ModelThrottledError`;
 * timeouts, network failures, 5xx and Bedrock's transient exceptions → `ModelTimeoutError` (both
 * retried); anything else the service rejected (validation, access, unknown model) →
 * `ModelRequestError` (permanent, goes to the fallback).
 */
export function classifyBedrockError(error: unknown): Error {
  const e = (error ?? {}) as {
    name?: string;
    message?: string;
    code?: string;
    $metadata?: { httpStatusCode?: number };
  };
  const name = e.name ?? 'Error';
  const status = e.$metadata?.httpStatusCode;
  const message = `Bedrock Converse failed: ${name}${status ? ` (HTTP ${status})` : ''}: ${e.message ?? String(error)}`;
  if (TRANSIENT_SERVICE_ERRORS.has(name)) return new ModelTimeoutError(message, { cause: error });
  if (name === 'ThrottlingException' || status === 429) return new ModelThrottledError(message, { cause: error });
  if ((status !== undefined && status >= 500) || TRANSPORT_ERRORS.has(name) || (e.code && NETWORK_CODES.has(e.code)))
    return new ModelTimeoutError(message, { cause: error });
  return new ModelRequestError(message, { cause: error });
}

/**
 * The `bedrock` model provider: Converse with temperature 0 and a pinned model id. Usage,
 * including prompt-cache read/write tokens, comes back with every response.
 *
 * @example
 * const model = new BedrockModel({ modelId: env.MODEL_ID!, maxTokens: 1024, region: env.AWS_REGION });
 */
export class BedrockModel implements ModelProvider {
  readonly name = 'bedrock' as const;
  readonly modelId: string;
  /** Built by the first call: the offline stand-in and a process that never converses never load the SDK. */
  private client?: Promise<BedrockRuntimeClient>;

  constructor(private readonly options: BedrockModelOptions) {
    this.modelId = options.modelId;
  }

  private async connect(): Promise<BedrockRuntimeClient> {
    const { BedrockRuntimeClient } = await import('@aws-sdk/client-bedrock-runtime');
    const { options } = this;
    const client = new BedrockRuntimeClient({
      region: options.region,
      endpoint: options.endpoint,
      credentials: options.credentials,
      maxAttempts: options.maxAttempts ?? 1,
      // The default handler is HTTP/2; requestTimeout is its per-stream inactivity limit.
      requestHandler: { requestTimeout: options.timeoutMs ?? 60_000 },
    });
    return options.tracer?.captureAWSv3Client(client) ?? client;
  }

  async converse(request: ConverseRequest, options: ConverseOptions = {}): Promise<ConverseResponse> {
    const input: ConverseCommandInput = {
      modelId: this.options.modelId,
      system: request.system,
      messages: request.messages as ConverseCommandInput['messages'],
      toolConfig: request.toolConfig as ConverseCommandInput['toolConfig'],
      // Temperature 0 unless the step asks otherwise: evals rely on the pinned model answering the same way every time.
      inferenceConfig: {
        ...request.inferenceConfig,
        maxTokens: request.inferenceConfig?.maxTokens ?? this.options.maxTokens,
        temperature: request.inferenceConfig?.temperature ?? 0,
      },
    };
    const { ConverseCommand } = await import('@aws-sdk/client-bedrock-runtime');
    const client = await (this.client ??= this.connect());
    let raw: ConverseCommandOutput;
    try {
      raw = await client.send(new ConverseCommand(input), { abortSignal: options.signal });
    } catch (error) {
      throw classifyBedrockError(error);
    }
    return parseConverseResponse(
      { output: raw.output, stopReason: raw.stopReason, usage: raw.usage },
      `bedrock ${this.options.modelId}`,
    );
  }

  forModel(modelId: string): BedrockModel {
    return new BedrockModel({ ...this.options, modelId });
  }

  /** Close the HTTP/2 sessions (tests; a Lambda keeps the client for the container's life). */
  destroy(): void {
    void this.client?.then((client) => client.destroy());
  }
}
