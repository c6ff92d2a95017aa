/**
 * An execution as an OpenTelemetry trace, in the OTLP/HTTP JSON encoding, built from what the
 * steps recorded (their outputs: model transcript, usage, tool calls, guard verdicts) rather than
 * by instrumenting the process: one trace per execution (its id derived from the execution ARN, so
 * exporting twice sends the same trace), a root span, a span per step, a span per model call with
 * the GenAI semantic-convention attributes, a span per tool call, guard verdicts as span events.
 *
 * Attributes carry names, numbers and routes only, never text: no prompt, no argument, no result,
 * no output field. Whatever a step marked personal (`pii` outputs, a tool's `personal` arguments)
 * therefore never reaches a collector.
 */
import { createHash } from 'node:crypto';
import type { StepOutput, ToolCallRecord } from '../contracts/step.ts';
import type { ModelTranscript } from '../contracts/transcript.ts';

/** One step of an execution, as the history shows it. */
export interface TracedStep {
  name: string;
  start: Date;
  end?: Date;
  /** The step's output, when an attempt succeeded. */
  output?: StepOutput;
  /** The name of the error that ended the step, when one did. */
  error?: string;
  retries: number;
}

export interface TracedExecution {
  arn: string;
  name: string;
  workflow: string;
  status: string;
  start: Date;
  end?: Date;
  steps: TracedStep[];
}

type AnyValue =
  | { stringValue: string }
  | { intValue: string }
  | { doubleValue: number }
  | { boolValue: boolean }
  | { arrayValue: { values: AnyValue[] } };
export interface OtlpAttribute {
  key: string;
  value: AnyValue;
}
export interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  /** 1 internal, 3 client. */
  kind: 1 | 3;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: OtlpAttribute[];
  events: { timeUnixNano: string; name: string; attributes: OtlpAttribute[] }[];
  /** 0 unset, 2 error. */
  status: { code: 0 | 2; message?: string };
}
/** `ExportTraceServiceRequest` as OTLP/HTTP JSON. */
export interface OtlpTraceRequest {
  resourceSpans: {
    resource: { attributes: OtlpAttribute[] };
    scopeSpans: { scope: { name: string; version: string }; spans: OtlpSpan[] }[];
  }[];
}

const value = (v: string | number | boolean | string[]): AnyValue =>
  Array.isArray(v)
    ? { arrayValue: { values: v.map((s) => ({ stringValue: s })) } }
    : typeof v === 'string'
      ? { stringValue: v }
      : typeof v === 'boolean'
        ? { boolValue: v }
        : Number.isInteger(v)
          ? { intValue: String(v) }
          : { doubleValue: v };

/** Attributes from a record, leaving out what is undefined. */
export const attributes = (record: Record<string, string | number | boolean | string[] | undefined>): OtlpAttribute[] =>
  Object.entries(record).flatMap(([key, v]) => (v === undefined ? [] : [{ key, value: value(v) }]));

const hex = (text: string, chars: number) => createHash('sha256').update(text).digest('hex').slice(0, chars);
const nanos = (ms: number) => `${BigInt(Math.round(ms)) * 1_000_000n}`;

/** `gen_ai.system` (and `gen_ai.provider.name`) of a provider. */
const GENAI_SYSTEM: Record<string, string> = { bedrock: 'aws.bedrock', openai: 'openai', offline: 'stepwise.offline' };

/** Builds the spans of one trace: ids from the execution and a path, so they are stable. */
function spanMaker(execution: TracedExecution) {
  const traceId = hex(execution.arn, 32);
  return (path: string, parent: string | undefined, span: Omit<OtlpSpan, 'traceId' | 'spanId' | 'parentSpanId'>) => ({
    traceId,
    spanId: hex(`${execution.arn}/${path}`, 16),
    ...(parent && { parentSpanId: parent }),
    ...span,
  });
}
type MakeSpan = ReturnType<typeof spanMaker>;

/** A tool call's span: the tool, whether it was refused or failed, replayed, and the guard's verdicts. */
function toolSpan(make: MakeSpan, path: string, parent: string, call: ToolCallRecord, startMs: number, endMs: number) {
  const replayed = (call.result as { replayed?: unknown } | undefined)?.replayed === true;
  const errorType = call.error?.split(':')[0];
  return make(path, parent, {
    name: `execute_tool ${call.tool}`,
    kind: 1,
    startTimeUnixNano: nanos(startMs),
    endTimeUnixNano: nanos(endMs),
    attributes: attributes({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': call.tool,
      'stepwise.tool.replayed': replayed || undefined,
      'error.type': errorType,
    }),
    events: (call.guard ?? []).map((v) => ({
      timeUnixNano: nanos(startMs),
      name: 'stepwise.guard.verdict',
      attributes: attributes({
        'stepwise.guard.check': v.check,
        'stepwise.guard.lane': v.lane,
        'stepwise.guard.passed': v.passed,
      }),
    })),
    status: errorType ? { code: 2, message: errorType } : { code: 0 },
  });
}

/** The tools a model call asked for (its response's `toolUse` blocks), but the route. */
const requestedTools = (transcript: ModelTranscript, messages: number): string[] =>
  (transcript.messages[messages]?.content ?? []).flatMap((b) =>
    'toolUse' in b && b.toolUse && b.toolUse.name !== 'route' ? [b.toolUse.name] : [],
  );

/**
 * The model calls of an LLM step, one after the other from the step's start (the transcript has
 * each call's duration, not its start), each followed by the tool calls it asked for, which take
 * the time until the next model call.
 */
function modelSpans(make: MakeSpan, step: TracedStep, parent: string, transcript: ModelTranscript): OtlpSpan[] {
  const spans: OtlpSpan[] = [];
  const calls = [...(step.output?.toolCalls ?? [])];
  let cursor = step.start.getTime();
  const endMs = step.end?.getTime() ?? cursor;
  transcript.calls.forEach((call, i) => {
    const path = `${step.name}/model/${i}`;
    const asked = requestedTools(transcript, call.messages);
    const end = cursor + call.durationMs;
    spans.push(
      make(path, parent, {
        name: `chat ${transcript.modelId ?? transcript.provider}`,
        kind: 3,
        startTimeUnixNano: nanos(cursor),
        endTimeUnixNano: nanos(end),
        attributes: attributes({
          'gen_ai.operation.name': 'chat',
          'gen_ai.system': GENAI_SYSTEM[transcript.provider] ?? transcript.provider,
          'gen_ai.provider.name': GENAI_SYSTEM[transcript.provider] ?? transcript.provider,
          'gen_ai.request.model': transcript.modelId,
          'gen_ai.request.temperature': transcript.inferenceConfig?.temperature,
          'gen_ai.request.max_tokens': transcript.inferenceConfig?.maxTokens,
          'gen_ai.usage.input_tokens': call.usage.inputTokens,
          'gen_ai.usage.output_tokens': call.usage.outputTokens,
          'gen_ai.response.finish_reasons': [call.stopReason],
          'stepwise.tool_calls': asked.length ? asked : undefined,
        }),
        events: [],
        status: { code: 0 },
      }),
    );
    const nextStart = i + 1 < transcript.calls.length ? Math.max(end, endMs - remaining(transcript, i + 1)) : endMs;
    for (const [j, tool] of asked.entries()) {
      const k = calls.findIndex((c) => c.tool === tool);
      if (k < 0) continue;
      spans.push(toolSpan(make, `${path}/tool/${j}`, parent, calls.splice(k, 1)[0]!, end, Math.max(end, nextStart)));
    }
    cursor = Math.max(end, nextStart);
  });
  // Calls no model response names (made by code around the model): the step's span holds them.
  calls.forEach((c, j) => spans.push(toolSpan(make, `${step.name}/tool/${j}`, parent, c, cursor, endMs)));
  return spans;
}

/** The recorded duration of the model calls from `from` on. */
const remaining = (transcript: ModelTranscript, from: number) =>
  transcript.calls.slice(from).reduce((sum, c) => sum + c.durationMs, 0);

/** A step's span and the spans inside it. */
function stepSpans(make: MakeSpan, step: TracedStep, index: number, root: string): OtlpSpan[] {
  const out = step.output;
  const startMs = step.start.getTime();
  const endMs = step.end?.getTime() ?? startMs;
  const span = make(`${index}/${step.name}`, root, {
    name: `step ${step.name}`,
    kind: 1,
    startTimeUnixNano: nanos(startMs),
    endTimeUnixNano: nanos(endMs),
    attributes: attributes({
      'stepwise.step': step.name,
      'stepwise.route': out?.next,
      'stepwise.decided_by': out?.decidedBy,
      'stepwise.retries': step.retries || undefined,
      'error.type': step.error,
    }),
    events: [],
    status: step.error ? { code: 2, message: step.error } : { code: 0 },
  });
  const inner = out?.transcript
    ? modelSpans((path, parent, s) => make(`${index}/${path}`, parent, s), step, span.spanId, out.transcript)
    : (out?.toolCalls ?? []).map((c, j) =>
        toolSpan(make, `${index}/${step.name}/tool/${j}`, span.spanId, c, startMs, endMs),
      );
  return [span, ...inner];
}

/** The execution's trace as one OTLP/HTTP JSON request. */
export function executionTrace(
  execution: TracedExecution,
  serviceName = 'stepwise',
  version = 'unknown',
): OtlpTraceRequest {
  const make = spanMaker(execution);
  const startMs = execution.start.getTime();
  const failed = execution.status !== 'SUCCEEDED' && execution.status !== 'RUNNING';
  const root = make('', undefined, {
    name: `workflow ${execution.workflow}`,
    kind: 1,
    startTimeUnixNano: nanos(startMs),
    endTimeUnixNano: nanos(execution.end?.getTime() ?? startMs),
    attributes: attributes({
      'stepwise.workflow': execution.workflow,
      'stepwise.execution.name': execution.name,
      'stepwise.execution.arn': execution.arn,
      'stepwise.execution.status': execution.status,
    }),
    events: [],
    status: failed ? { code: 2, message: execution.status } : { code: 0 },
  });
  const spans = [root, ...execution.steps.flatMap((step, i) => stepSpans(make, step, i, root.spanId))];
  return {
    resourceSpans: [
      {
        resource: { attributes: attributes({ 'service.name': serviceName }) },
        scopeSpans: [{ scope: { name: 'stepwise', version }, spans }],
      },
    ],
  };
}
