/**
 * The state-size guard. Step Functions fails an execution whose state (or a task result) exceeds
 * 256 KiB with `States.DataLimitExceeded`, which no Catch handles. So the step handler measures
 * the payload a step returns and, past STATE_BUDGET_BYTES, moves the largest output values to the
 * execution's partition of the events table and leaves a small pointer in their place; the step
 * handler resolves pointers in `previous.fields` / `previous.data` before the next step runs, so
 * steps, tools and templates see the values, never the pointers.
 */
import { createHash } from 'node:crypto';
import { ConditionalCheckFailedException, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod';
import { queryPrefix } from '../core/dynamo-query.ts';
import { StateTooLargeError } from '../core/errors.ts';
import type { StepOutput } from './contracts/step.ts';
import { eventPartitionKey } from './event-log.ts';

/**
 * Past this many bytes of a step's returned payload (UTF-8 JSON), its largest output values are
 * offloaded: a quarter of the 256 KiB state limit, leaving room for the execution input, the
 * error of a caught step and the ASL's own fields.
 */
export const STATE_BUDGET_BYTES = 64 * 1024;
/** A value this small stays inline: moving it would not help and costs a read. */
const MIN_OFFLOAD_BYTES = 1024;
/** Bytes per stored item: DynamoDB items are at most 400 KB. */
const CHUNK_BYTES = 300 * 1024;

/**
 * Where an offloaded value lives: its sort-key prefix in the execution's partition, how many chunks, and its digest.
 */
export const OffloadedSchema = z
  .object({
    $offloaded: z
      .object({
        key: z.string().startsWith('VAL#'),
        chunks: z.number().int().positive(),
        bytes: z.number().int().nonnegative(),
        sha256: z.string().length(64),
      })
      .strict(),
  })
  .strict();
export type Offloaded = z.infer<typeof OffloadedSchema>;

export const isOffloaded = (value: unknown): value is Offloaded => OffloadedSchema.safeParse(value).success;

/** Stores the chunks of offloaded values under an execution (write-once: a retried step writes the same item). */
export interface ValueStore {
  put(execution: string, key: string, chunks: Uint8Array[]): Promise<void>;
  /** The chunks under `key`, in order (empty when there are none). */
  get(execution: string, key: string): Promise<Uint8Array[]>;
}

const chunkKey = (key: string, i: number) => `${key}#${String(i).padStart(4, '0')}`;

/** The events table (`pk = EXEC#<execution>`, `sk = VAL#...`: outside the `EVT#` range the event log lists). */
export function dynamoValueStore(client: DynamoDBClient, tableName: string): ValueStore {
  const doc = DynamoDBDocumentClient.from(client);
  return {
    async put(execution, key, chunks) {
      for (const [i, chunk] of chunks.entries()) {
        try {
          await doc.send(
            new PutCommand({
              TableName: tableName,
              Item: { pk: eventPartitionKey(execution), sk: chunkKey(key, i), value: chunk },
              ConditionExpression: 'attribute_not_exists(pk)',
            }),
          );
        } catch (e) {
          // The key holds the content's digest: an existing item is this very chunk (a retried step).
          if (!(e instanceof ConditionalCheckFailedException)) throw e;
        }
      }
    },
    async get(execution, key) {
      const items = await queryPrefix(doc, tableName, eventPartitionKey(execution), `${key}#`);
      return items.map((item) => item.value as Uint8Array);
    },
  };
}

/** In-memory adapter (tests). */
export function memoryValueStore(): ValueStore & { items: Map<string, Uint8Array> } {
  const items = new Map<string, Uint8Array>();
  return {
    items,
    async put(execution, key, chunks) {
      chunks.forEach((chunk, i) => {
        const id = `${execution}|${chunkKey(key, i)}`;
        if (!items.has(id)) items.set(id, chunk);
      });
    },
    async get(execution, key) {
      const prefix = `${execution}|${key}#`;
      return [...items.entries()]
        .filter(([id]) => id.startsWith(prefix))
        .sort(([a], [b]) => (a < b ? -1 : 1))
        .map(([, chunk]) => chunk);
    },
  };
}

/** UTF-8 bytes of a value as JSON: what Step Functions counts. */
export const payloadBytes = (value: unknown): number => Buffer.byteLength(JSON.stringify(value) ?? '', 'utf8');

/**
 * Keep a step's returned payload within `budget`: move its largest output values (in `fields`,
 * and the same values in `data`) to `store`, largest first, until it fits.
 * @param store called only when something moves (a step that fits needs no store)
 * @param measure the bytes of what the handler returns for an output (e.g. its summary in prod)
 * @returns the output to return (unchanged when it fits) and the fields moved.
 * @throws StateTooLargeError when it still does not fit with every movable field moved (the
 *   step fails, and the ASL Catch hands the execution to the fallback, instead of an uncatchable
 *   `States.DataLimitExceeded`).
 */
export async function offloadLargeFields(
  output: StepOutput,
  store: () => ValueStore,
  execution: string,
  budget: number = STATE_BUDGET_BYTES,
  measure: (output: StepOutput) => number = payloadBytes,
): Promise<{ output: StepOutput; moved: string[] }> {
  if (measure(output) <= budget) return { output, moved: [] };
  const fields = { ...output.fields };
  const data = { ...output.data };
  const moved: string[] = [];
  const candidates = Object.entries(output.fields)
    .map(([name, value]) => ({ name, json: JSON.stringify(value) ?? 'null' }))
    .filter(({ json }) => Buffer.byteLength(json, 'utf8') >= MIN_OFFLOAD_BYTES)
    .sort((a, b) => b.json.length - a.json.length);
  for (const { name, json } of candidates) {
    if (measure({ ...output, fields, data }) <= budget) break;
    const bytes = Buffer.from(json, 'utf8');
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    const key = `VAL#${String(output.count).padStart(4, '0')}#${output.step}#${name}#${sha256.slice(0, 16)}`;
    const chunks: Uint8Array[] = [];
    for (let at = 0; at < bytes.length; at += CHUNK_BYTES) chunks.push(bytes.subarray(at, at + CHUNK_BYTES));
    await store().put(execution, key, chunks);
    const pointer: Offloaded = { $offloaded: { key, chunks: chunks.length, bytes: bytes.length, sha256 } };
    fields[name] = pointer;
    if (Object.hasOwn(data, name)) data[name] = pointer;
    moved.push(name);
  }
  const guarded = { ...output, fields, data };
  const size = measure(guarded);
  if (size > budget)
    throw new StateTooLargeError(
      `${output.step}: its output is ${size} bytes with ${moved.length ? moved.join(', ') : 'no field'} offloaded (budget ${budget}); the tool calls or reply are too large`,
    );
  return { output: guarded, moved };
}

/**
 * The values behind the pointers in a state object (`previous.fields` or `previous.data`), read
 * from `store`; an object without pointers is returned as is, with no read.
 * @throws StateTooLargeError when a pointed-to value is missing or does not match its digest.
 */
export async function resolveOffloaded(
  state: Record<string, unknown>,
  store: () => ValueStore,
  execution: string,
): Promise<Record<string, unknown>> {
  const pointers = Object.entries(state).filter((entry): entry is [string, Offloaded] => isOffloaded(entry[1]));
  if (pointers.length === 0) return state;
  const resolved = { ...state };
  for (const [name, { $offloaded: ref }] of pointers) {
    const chunks = await store().get(execution, ref.key);
    const bytes = Buffer.concat(chunks);
    if (chunks.length !== ref.chunks || createHash('sha256').update(bytes).digest('hex') !== ref.sha256)
      throw new StateTooLargeError(
        `offloaded value ${name} (${ref.key}) is missing or altered: ${chunks.length}/${ref.chunks} chunks`,
      );
    resolved[name] = JSON.parse(bytes.toString('utf8')) as unknown;
  }
  return resolved;
}
