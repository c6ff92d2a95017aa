/**
 * The append-only event log: one immutable record per thing that happened to an email (ingress
 * decision, each completed step), so the history of an email can be read without the console.
 *
 * Personal data lives only inside each event's `personal` object (the sender address, the
 * subject, the reply text, step outputs marked `pii: true`); everything else is safe to show in
 * dashboards and INFO logs.
 */
import { ConditionalCheckFailedException, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod';
import { documentClient, fromStoredJson, JsonObjectSchema, toStoredJson } from '../core/dynamo-json.ts';
import { queryPrefix } from '../core/dynamo-query.ts';
import type { StepFrontmatter } from '../definitions/workflow/schema.ts';
import type { StepOutput } from './contracts/step.ts';

const Base = {
  executionName: z.string().min(1),
  /** ISO timestamp of when the event was recorded. */
  at: z.iso.datetime(),
};

const Usage = z
  .object({
    modelCalls: z.number().int().nonnegative(),
    inputTokens: z.number(),
    outputTokens: z.number(),
    cacheReadInputTokens: z.number(),
    cacheWriteInputTokens: z.number(),
  })
  .strict();

const ToolCallSummary = z
  .object({
    tool: z.string(),
    outcome: z.enum(['ok', 'error']),
    error: z.string().optional(),
    /** Only the arguments of the tool's schema that it does not declare personal (`ToolDefinition.personal`). */
    args: JsonObjectSchema.optional(),
    /** The output guard's verdicts on the call: rule, lane, pass/fail (what broke a rule stays in `error`). */
    guard: z
      .array(z.object({ check: z.string(), lane: z.enum(['deterministic', 'judge']), passed: z.boolean() }).strict())
      .optional(),
  })
  .strict();

/** A step's output values: whatever the model or the code returned, kept as it came. */
const Fields = JsonObjectSchema;

export const IngressAcceptedEvent = z
  .object({
    type: z.literal('IngressAccepted'),
    ...Base,
    /** Key of the stored body (EmailStore). */
    emailId: z.string(),
    bodyChars: z.number().int().nonnegative(),
    personal: z.object({ from: z.string(), subject: z.string() }).strict(),
  })
  .strict();

export const IngressRejectedEvent = z
  .object({
    type: z.literal('IngressRejected'),
    ...Base,
    emailId: z.string(),
    /** A reject reason code of the ingress (`spam`, `auto_submitted`, `too_large`, ...). */
    reason: z.string().min(1),
    detail: z.string(),
    personal: z.object({ from: z.string().optional() }).strict(),
  })
  .strict();

export const StepCompletedEvent = z
  .object({
    type: z.literal('StepCompleted'),
    ...Base,
    step: z.string(),
    /**
     * The step's position in the execution (1 for the entry step): orders the log and makes a retried append a no-op.
     */
    count: z.number().int().positive(),
    /** Inside the items of a map step, `<map step>#<index>`: the items' steps share a position. */
    item: z.string().optional(),
    next: z.string(),
    reason: z.string(),
    decidedBy: z.enum(['model', 'model-text', 'code', 'offline']),
    durationMs: z.number().nonnegative(),
    usage: Usage,
    toolCalls: z.array(ToolCallSummary),
    /** Step outputs not marked `pii`. */
    fields: Fields,
    personal: z.object({ from: z.string().optional(), fields: Fields, reply: z.string().optional() }).strict(),
  })
  .strict();

export const StepwiseEvent = z.discriminatedUnion('type', [
  IngressAcceptedEvent,
  IngressRejectedEvent,
  StepCompletedEvent,
]);
export type IngressAcceptedEvent = z.infer<typeof IngressAcceptedEvent>;
export type IngressRejectedEvent = z.infer<typeof IngressRejectedEvent>;
export type StepCompletedEvent = z.infer<typeof StepCompletedEvent>;
export type StepwiseEvent = z.infer<typeof StepwiseEvent>;

/** Append-only event log port. */
export interface EventLog {
  /**
   * Record an event once. Returns `false` (and changes nothing) when the event's slot is already
   * taken: a retried step, a duplicate delivery. Events are never overwritten.
   */
  append(event: StepwiseEvent): Promise<boolean>;
  /** The events of one execution, oldest first. */
  list(executionName: string): Promise<StepwiseEvent[]>;
}

/**
 * The sort key of an event: its position in the execution. The ingress decision is position 0
 * (one per mail, accepted or rejected); a step is its `count`. Deriving it from the event, not
 * from a clock, is what makes an append idempotent.
 */
export function eventSortKey(event: StepwiseEvent): string {
  return event.type === 'StepCompleted'
    ? `EVT#${String(event.count).padStart(4, '0')}#${event.step}${event.item === undefined ? '' : `#${event.item}`}`
    : 'EVT#0000#INGRESS';
}

export const eventPartitionKey = (executionName: string) => `EXEC#${executionName}`;

/** The attributes that hold what a model, a tool or a sender produced: stored as JSON text (src/core/dynamo-json.ts). */
const FREE_FORM = ['fields', 'personal', 'toolCalls'] as const;

/**
 * DynamoDB adapter (EVENTS_TABLE; `pk = EXEC#<execution>`, `sk = EVT#<position>#...`); an event's
 * free-form parts (`fields`, `personal`, `toolCalls`) are kept as JSON text.
 */
export function dynamoEventLog(client: DynamoDBClient, tableName: string): EventLog {
  const doc = documentClient(client);
  const toItem = (event: StepwiseEvent): Record<string, unknown> => {
    const item: Record<string, unknown> = {
      pk: eventPartitionKey(event.executionName),
      sk: eventSortKey(event),
      ...event,
    };
    for (const key of FREE_FORM) if (item[key] !== undefined) item[key] = toStoredJson(item[key]);
    return item;
  };
  const fromItem = ({ pk: _pk, sk: _sk, ...item }: Record<string, unknown>): StepwiseEvent => {
    for (const key of FREE_FORM) if (item[key] !== undefined) item[key] = fromStoredJson(item[key]);
    return StepwiseEvent.parse(item);
  };
  return {
    async append(event) {
      const valid = StepwiseEvent.parse(event);
      try {
        await doc.send(
          new PutCommand({
            TableName: tableName,
            Item: toItem(valid),
            ConditionExpression: 'attribute_not_exists(pk)',
          }),
        );
        return true;
      } catch (e) {
        if (e instanceof ConditionalCheckFailedException) return false;
        throw e;
      }
    },
    async list(executionName) {
      const items = await queryPrefix(doc, tableName, eventPartitionKey(executionName), 'EVT#');
      return items.map(fromItem);
    },
  };
}

/** In-memory adapter with the same write-once semantics: for evals and tests that run without DynamoDB. */
export function memoryEventLog(): EventLog {
  const items = new Map<string, StepwiseEvent>();
  return {
    async append(event) {
      const valid = StepwiseEvent.parse(event);
      const key = `${eventPartitionKey(valid.executionName)}|${eventSortKey(valid)}`;
      if (items.has(key)) return false;
      items.set(key, structuredClone(valid));
      return true;
    },
    async list(executionName) {
      const prefix = `${eventPartitionKey(executionName)}|`;
      return [...items.entries()]
        .filter(([key]) => key.startsWith(prefix))
        .sort(([a], [b]) => (a < b ? -1 : 1))
        .map(([, event]) => structuredClone(event));
    },
  };
}

/** What the event builder needs to know about tools: the arguments of a call it may keep (none for an unknown tool). */
export type LoggableArgs = (tool: string, args: Record<string, unknown>) => Record<string, unknown>;

/**
 * Build the `StepCompleted` event from a step's output. Output fields the step declares with
 * `pii: true` — and any field it does not declare at all — go to `personal.fields`; tool
 * arguments are kept only when the tool does not declare them personal.
 */
export function stepCompletedEvent(
  output: StepOutput,
  opts: {
    executionName: string;
    at: Date;
    /** The step's declared outputs (frontmatter `outputs`), for the `pii` flags. */
    outputs: StepFrontmatter['outputs'];
    loggableArgs: LoggableArgs;
    /** The inbound sender, when the workflow has one. */
    from?: string;
    /** Inside the items of a map step: `<map step>#<index>`. */
    item?: string;
  },
): StepCompletedEvent {
  const fields: Record<string, unknown> = {};
  const personalFields: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(output.fields)) {
    const declared = opts.outputs[key];
    (declared && !declared.pii ? fields : personalFields)[key] = value;
  }
  return {
    type: 'StepCompleted',
    executionName: opts.executionName,
    at: opts.at.toISOString(),
    step: output.step,
    count: output.count,
    ...(opts.item !== undefined && { item: opts.item }),
    next: output.next,
    reason: output.reason,
    decidedBy: output.decidedBy,
    durationMs: output.durationMs,
    usage: output.usage,
    toolCalls: output.toolCalls.map((call) => {
      const args = opts.loggableArgs(call.tool, call.args);
      return {
        tool: call.tool,
        outcome: call.error === undefined ? ('ok' as const) : ('error' as const),
        ...(call.error === undefined ? {} : { error: call.error }),
        ...(Object.keys(args).length ? { args } : {}),
        ...(call.guard ? { guard: call.guard.map(({ check, lane, passed }) => ({ check, lane, passed })) } : {}),
      };
    }),
    fields,
    personal: {
      ...(opts.from === undefined ? {} : { from: opts.from }),
      fields: personalFields,
      ...(output.reply === undefined ? {} : { reply: output.reply }),
    },
  };
}
