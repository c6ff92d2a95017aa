/**
 * The model request and response of an LLM step, recorded in its output (`StepOutput.transcript`)
 * so the execution history shows what the model was asked and answered: the system prompt, the
 * tool configuration, every message of the tool-use loop, and per call the stop reason, tokens and
 * latency. The record is bounded ({@link boundedTranscript}): a step's output stays far below the
 * 256 KiB task result quota whatever the conversation held.
 */
import type {
  ConverseUsage,
  InferenceConfiguration,
  Message,
  ProviderName,
  StopReason,
  SystemBlock,
  ToolConfiguration,
} from './model-port.ts';

/**
 * One model call: the request held `transcript.messages.slice(0, messages)`, the response is
 * `transcript.messages[messages]`.
 */
export interface ModelCallRecord {
  messages: number;
  stopReason: StopReason;
  usage: ConverseUsage;
  durationMs: number;
}

/** An LLM step's conversation with the model. */
export interface ModelTranscript {
  /** `offline` is the deterministic stand-in, not an LLM. */
  provider: ProviderName;
  /** The pinned model id (the offline stand-in: the model it stands in for). */
  modelId?: string;
  /** The step definition's `version`: which prompt ran. */
  stepVersion: string;
  system: SystemBlock[];
  toolConfig?: ToolConfiguration;
  inferenceConfig?: InferenceConfiguration;
  /** The whole conversation: each request's messages and each response, in order. */
  messages: Message[];
  calls: ModelCallRecord[];
  /** Set when texts were cut or parts dropped to stay within the bound. */
  truncated?: true;
}

/** The most a transcript takes in a step output (UTF-8 JSON). */
export const TRANSCRIPT_MAX_BYTES = 32 * 1024;
/** Cuts tried in turn on every string of the transcript until it fits. */
const TEXT_LIMITS = [4000, 1000, 250];

const bytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value), 'utf8');

/** Every string of a JSON value cut to `limit` characters (the cut says how much went). */
function cutStrings(value: unknown, limit: number): unknown {
  if (typeof value === 'string')
    return value.length <= limit ? value : `${value.slice(0, limit)}… [${value.length - limit} characters cut]`;
  if (Array.isArray(value)) return value.map((v) => cutStrings(v, limit));
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, cutStrings(v, limit)]));
  return value;
}

/**
 * The transcript within `maxBytes`: unchanged when it fits; else every string cut shorter and
 * shorter, then the tools' input schemas dropped (their names stay), then the middle of the
 * conversation dropped (the first message, the step context, and the last four stay), with
 * `truncated` set. The call records always stay.
 */
export function boundedTranscript(
  transcript: ModelTranscript,
  maxBytes: number = TRANSCRIPT_MAX_BYTES,
): ModelTranscript {
  if (bytes(transcript) <= maxBytes) return transcript;
  let cut = transcript;
  for (const limit of TEXT_LIMITS) {
    cut = { ...(cutStrings(transcript, limit) as ModelTranscript), calls: transcript.calls, truncated: true };
    if (bytes(cut) <= maxBytes) return cut;
  }
  if (cut.toolConfig) {
    cut = {
      ...cut,
      toolConfig: {
        ...cut.toolConfig,
        tools: cut.toolConfig.tools.map(({ toolSpec }) => ({ toolSpec: { ...toolSpec, inputSchema: { json: {} } } })),
      },
    };
    if (bytes(cut) <= maxBytes) return cut;
  }
  if (cut.messages.length <= 5) return cut;
  return {
    ...cut,
    messages: [
      ...cut.messages.slice(0, 1),
      { role: 'user', content: [{ text: `[${cut.messages.length - 5} messages dropped]` }] },
      ...cut.messages.slice(-4),
    ],
  };
}
