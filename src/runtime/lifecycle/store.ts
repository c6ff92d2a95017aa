/**
 * A lifecycle's event store: per entity an append-only log of `LoggedEvent`s with a gap-free sequence
 * number, and the entity's snapshot (state, context, version, conversation, eventCount, progress)
 * as a projection written in the SAME atomic write as the events it reflects, so state and log
 * can never diverge.
 *
 * Concurrency: an append names the `eventCount` it read (== the last `seq`); it fails with
 * `VersionConflictError` when another append got there first, and the caller re-reads and
 * re-applies (bounded, with jittered backoff: {@link conflictBackoffMs}). `eventCount`, not
 * `version`, guards the write: logged-only events change the snapshot without a version bump.
 *
 * Idempotency: every append records a marker for its trigger event id in the same write; a
 * redelivered id is reported as `DUPLICATE` by the read before applying and, when two deliveries
 * race, by the append itself. Nothing is written for a duplicate.
 *
 * DynamoDB layout (one table, string keys `pk`/`sk`):
 *
 * | item       | pk          | sk                      | attributes                                           |
 * |------------|-------------|-------------------------|------------------------------------------------------|
 * | projection | `ENTITY#<id>` | `STATE`                 | `entityId`, the `EntitySnapshot` fields, `lastEventTime` |
 * | event      | `ENTITY#<id>` | `EVT#<seq, 10 digits>`  | the `LoggedEvent`, `detail` as JSON text             |
 * | id marker  | `ENTITY#<id>` | `ID#<trigger event id>` | `seq` of the trigger                                 |
 * | outbox     | `ENTITY#<id>` | `OUTBOX#<version, 10 d>`| `type: state_changed`, `detail`, `expiresAt`         |
 *
 * Transactional outbox: the `<entity>.state_changed` an append causes is written in the same
 * transaction as the change, as an outbox item. The table's stream publishes it (an EventBridge
 * Pipe, src/runtime/lifecycle/handlers/outbox.ts), so a committed change is published at least once
 * even when everything after the commit fails; consumers dedupe by `changeId`. Outbox items expire
 * (TTL `expiresAt`) once the stream has long delivered them.
 */
import { createHash, randomUUID } from 'node:crypto';
import { DynamoDBClient, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import {
  BatchGetCommand,
  type BatchGetCommandInput,
  type BatchGetCommandOutput,
  type DynamoDBDocumentClient,
  GetCommand,
  paginateScan,
  TransactWriteCommand,
} from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { documentClient, fromStoredJson, toStoredJson } from '../../core/dynamo-json.ts';
import { queryPrefix } from '../../core/dynamo-query.ts';
import type { Env } from '../../core/env.ts';
import { InvalidInputError, VersionConflictError } from '../../core/errors.ts';
import {
  type EntitySnapshot,
  EntitySnapshotSchema,
  type LoggedEvent,
  LoggedEventSchema,
} from '../../definitions/lifecycle/schema.ts';
import type { ClientTracer } from '../observability.ts';
import type { StateChangedDetail } from './state-changes.ts';
import type { ApplyResult } from './transition.ts';

/**
 * What an append writes: the applied result and, when state or context changed, the change to publish (the outbox
 * item).
 */
export type AppendInput = ApplyResult & { stateChanged?: StateChangedDetail | null };

/** `sk` prefix of outbox items; the pipe's filter and the local stream reader match it. */
export const OUTBOX_SK_PREFIX = 'OUTBOX#';
/** The table's TTL attribute (epoch seconds); only outbox items carry it. */
export const EXPIRES_AT_ATTRIBUTE = 'expiresAt';
/** How long an outbox item outlives its commit: far beyond the stream's 24 h retention. */
const OUTBOX_TTL_SECONDS = 7 * 24 * 3600;

/**
 * A DynamoDB stream record as Lambda and EventBridge Pipes receive it (`NEW_IMAGE` view): what
 * the outbox publisher reads, from AWS, DynamoDB Local or the in-memory store.
 */
export interface StreamRecord {
  eventID: string;
  eventName: 'INSERT' | 'MODIFY' | 'REMOVE';
  eventSource: 'aws:dynamodb';
  dynamodb: {
    Keys: Record<string, unknown>;
    NewImage?: Record<string, unknown>;
    SequenceNumber: string;
    ApproximateCreationDateTime?: number;
  };
}

/** A entity as stored: its id and snapshot. */
export interface EntityRecord {
  entityId: string;
  snapshot: EntitySnapshot;
}

/** What the store knows before an event is applied. */
export interface LoadedEntity {
  /** `undefined` for a entity with no event yet. */
  snapshot: EntitySnapshot | undefined;
  /** The event id is already in the entity's log (as a trigger): apply nothing. */
  duplicate: boolean;
}

/**
 * `APPENDED`: the events and the snapshot were written; `DUPLICATE`: the trigger id was already logged, nothing was
 * written.
 */
export type AppendStatus = 'APPENDED' | 'DUPLICATE';

/**
 * The event store port. Adapters: {@link dynamoLifecycleStore} (AWS and DynamoDB Local) and {@link
 * memoryLifecycleStore}.
 */
export interface LifecycleStore {
  /** The entity's snapshot and whether `eventId` was already applied, read consistently. */
  load(entityId: string, eventId: string): Promise<LoadedEntity>;
  /**
   * Append `result.events` (the trigger first, then the events it raised) and store
   * `result.snapshot`, atomically, if the entity's `eventCount` is still `expectedEventCount`.
   * @throws VersionConflictError when it is not (re-read and re-apply).
   * @throws InvalidInputError when `result` does not continue the log (`seq`s, `eventCount`, trigger id).
   * @param requestId who appends (the state machine passes its execution id): the same request
   *   repeated — a Persist retried after its first attempt committed — is answered `APPENDED` again,
   *   so the change is still published; another request for an applied event id is a `DUPLICATE`.
   */
  append(entityId: string, expectedEventCount: number, result: AppendInput, requestId?: string): Promise<AppendStatus>;
  getEntity(entityId: string): Promise<EntitySnapshot | undefined>;
  /** The entity's log in `seq` order (empty for an unknown entity). */
  listEvents(entityId: string): Promise<LoggedEvent[]>;
  /** Every entity, sorted by id. */
  listEntities(): Promise<EntityRecord[]>;
  /** Every entity's log, entities sorted by id, each in `seq` order: the input of reports. */
  listAllEvents(): Promise<LoggedEvent[]>;
}

/** First backoff window after a conflict, doubled per attempt. */
const CONFLICT_BACKOFF_BASE_MS = 25;
/** The backoff window never grows beyond this. */
const CONFLICT_BACKOFF_CAP_MS = 1000;

/**
 * How long to wait before re-reading after the `attempt`-th conflict (1, 2, ...): "full jitter",
 * a uniform draw in `[0, min(cap, base * 2^attempt))`, so writers that collided spread out.
 */
export function conflictBackoffMs(attempt: number, random: () => number = Math.random): number {
  if (attempt <= 0) return 0;
  return Math.floor(random() * Math.min(CONFLICT_BACKOFF_CAP_MS, CONFLICT_BACKOFF_BASE_MS * 2 ** attempt));
}

/**
 * Check that `result` continues a log whose last `seq` is `expectedEventCount` with the trigger
 * first: the gap-free guarantee does not depend on callers being right.
 */
function checkContinues(
  entityId: string,
  expectedEventCount: number,
  { events, snapshot, stateChanged }: AppendInput,
): void {
  const fail = (problem: string) => new InvalidInputError(`append to ${entityId}: ${problem}`);
  if (events.length === 0) throw fail('no events');
  if (events.some((e) => e.entityId !== entityId)) throw fail('an event of another entity');
  if (events.some((e, i) => e.seq !== expectedEventCount + 1 + i))
    throw fail(`seq ${events.map((e) => e.seq).join(',')} does not follow ${expectedEventCount}`);
  if (snapshot.eventCount !== expectedEventCount + events.length)
    throw fail(`snapshot eventCount ${snapshot.eventCount} is not ${expectedEventCount + events.length}`);
  if (
    stateChanged &&
    (stateChanged.entityId !== entityId ||
      stateChanged.version !== snapshot.version ||
      stateChanged.eventId !== events[0]!.id)
  )
    throw fail(`the state change (of ${stateChanged.entityId}, version ${stateChanged.version}) is not this append's`);
}

/**
 * The idempotency token of an append: the same request for the same (entity, triggering event,
 * expected eventCount) is the same transaction, which DynamoDB answers as committed for 10 minutes
 * (ClientRequestToken). Without a request id every append is its own request.
 */
function transactionToken(
  entityId: string,
  triggerId: string,
  expectedEventCount: number,
  requestId: string = randomUUID(),
): string {
  return createHash('sha256')
    .update(`${entityId}|${triggerId}|${expectedEventCount}|${requestId}`)
    .digest('hex')
    .slice(0, 36);
}

/** The outbox item of a change, keyed by the version it produced (unique per entity: each change bumps it). */
function outboxItem(entityId: string, change: StateChangedDetail, committedAt: number): Item {
  return {
    pk: entityPk(entityId),
    sk: `${OUTBOX_SK_PREFIX}${String(change.version).padStart(SEQ_DIGITS, '0')}`,
    type: 'state_changed',
    detail: change,
    [EXPIRES_AT_ATTRIBUTE]: Math.floor(committedAt / 1000) + OUTBOX_TTL_SECONDS,
  };
}

/** The in-memory store: a {@link LifecycleStore} whose writes also appear, in commit order, as stream records. */
export interface MemoryLifecycleStore extends LifecycleStore {
  /** Every item an append wrote, as a `NEW_IMAGE` stream record (the local stand-in for the table's stream). */
  readonly streamRecords: readonly StreamRecord[];
}

/**
 * An event store in memory, with the same semantics as {@link dynamoLifecycleStore} (each method is
 * atomic), its outbox included. For local runs without Java and for fast tests; data lives as long as the object.
 */
export function memoryLifecycleStore(now: () => number = Date.now): MemoryLifecycleStore {
  const entities = new Map<string, { snapshot: EntitySnapshot; events: LoggedEvent[]; ids: Set<string> }>();
  const committed = new Set<string>();
  const streamRecords: StreamRecord[] = [];
  const record = (item: Item, existed: boolean) => {
    const seq = String(streamRecords.length + 1).padStart(21, '0');
    streamRecords.push({
      eventID: `mem-${seq}`,
      eventName: existed ? 'MODIFY' : 'INSERT',
      eventSource: 'aws:dynamodb',
      dynamodb: {
        Keys: marshall({ pk: item.pk, sk: item.sk }),
        NewImage: marshall(item, { removeUndefinedValues: true, convertClassInstanceToMap: true }),
        SequenceNumber: seq,
        ApproximateCreationDateTime: Math.floor(now() / 1000),
      },
    });
  };
  const sortedIds = () => [...entities.keys()].sort(compare);
  return {
    async load(entityId, eventId) {
      const entity = entities.get(entityId);
      return { snapshot: entity && structuredClone(entity.snapshot), duplicate: entity?.ids.has(eventId) ?? false };
    },
    async append(entityId, expectedEventCount, result, requestId) {
      checkContinues(entityId, expectedEventCount, result);
      const entity = entities.get(entityId);
      const token = transactionToken(entityId, result.events[0]!.id, expectedEventCount, requestId);
      // Like DynamoDB's ClientRequestToken: the same transaction again is answered as committed.
      if (committed.has(token)) return 'APPENDED';
      if (entity?.ids.has(result.events[0]!.id)) return 'DUPLICATE';
      const current = entity?.snapshot.eventCount ?? 0;
      if (current !== expectedEventCount)
        throw new VersionConflictError(`${entityId}: expected eventCount ${expectedEventCount}, found ${current}`);
      const next = entity ?? { snapshot: result.snapshot, events: [], ids: new Set<string>() };
      next.snapshot = structuredClone(result.snapshot);
      next.events.push(...structuredClone(result.events));
      next.ids.add(result.events[0]!.id);
      entities.set(entityId, next);
      committed.add(token);
      const pk = entityPk(entityId);
      record({ pk, sk: STATE_SK, entityId, ...result.snapshot }, entity !== undefined);
      record({ pk, sk: idSk(result.events[0]!.id), seq: result.events[0]!.seq }, false);
      for (const e of result.events) record(eventItem(entityId, e), false);
      if (result.stateChanged) record(outboxItem(entityId, result.stateChanged, now()), false);
      return 'APPENDED';
    },
    async getEntity(entityId) {
      const entity = entities.get(entityId);
      return entity && structuredClone(entity.snapshot);
    },
    async listEvents(entityId) {
      return structuredClone(entities.get(entityId)?.events ?? []);
    },
    async listEntities() {
      return sortedIds().map((entityId) => ({ entityId, snapshot: structuredClone(entities.get(entityId)!.snapshot) }));
    },
    async listAllEvents() {
      return sortedIds().flatMap((entityId) => structuredClone(entities.get(entityId)!.events));
    },
    streamRecords,
  };
}

const STATE_SK = 'STATE';
const EVENT_SK_PREFIX = 'EVT#';
const ID_SK_PREFIX = 'ID#';
/** 10 digits: `sk` sorts like `seq` up to ~10^10 events per entity. */
const SEQ_DIGITS = 10;

const entityPk = (entityId: string) => `ENTITY#${entityId}`;
const eventSk = (seq: number) => `${EVENT_SK_PREFIX}${String(seq).padStart(SEQ_DIGITS, '0')}`;
const idSk = (eventId: string) => `${ID_SK_PREFIX}${eventId}`;

type Item = Record<string, unknown>;

function snapshotOf(item: Item): EntitySnapshot {
  const { state, context, version, conversation, eventCount, progress, crmUpdatedAt } = item;
  return EntitySnapshotSchema.parse({
    state,
    context,
    version,
    conversation,
    eventCount,
    progress,
    ...(crmUpdatedAt !== undefined && { crmUpdatedAt }),
  });
}

/** An event as its item holds it: the detail, which producers fill with any JSON, as its text (src/core/dynamo-json.ts). */
function eventItem(entityId: string, e: LoggedEvent): Item {
  const { detail, ...event } = e;
  return {
    pk: entityPk(entityId),
    sk: eventSk(e.seq),
    ...event,
    ...(detail !== undefined && { detail: toStoredJson(detail) }),
  };
}

function eventOf(item: Item): LoggedEvent {
  const { pk: _pk, sk: _sk, detail, ...event } = item;
  return LoggedEventSchema.parse({ ...event, ...(detail !== undefined && { detail: fromStoredJson(detail) }) });
}

/** Wait `ms` (on the global timer, which tests can fake). */
export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** BatchGetItem requests a read makes before it gives up on keys DynamoDB keeps leaving unprocessed. */
const BATCH_GET_ATTEMPTS = 5;

/** Position of each item in the transaction: the projection, then the id marker, then the events. */
const PROJECTION = 0;
const MARKER = 1;

/**
 * The event store in DynamoDB. Every append is ONE `TransactWriteItems`: the projection put
 * (conditioned on the expected `eventCount`, or on absence for a new entity), the trigger's id
 * marker and every event item (each conditioned on absence). Each call has its own
 * `ClientRequestToken`: the SDK's retries of that call (a response lost after the write) are
 * answered with success instead of a false duplicate, while another delivery of the same event,
 * with its own token, fails on the id marker and is reported as `DUPLICATE`.
 *
 * `listEntities` and `listAllEvents` scan: they serve reports and the CLI, which read every entity
 * anyway. A GSI to list entities would put every entity under one partition key (a hot partition that
 * throttles the writes it mirrors); at scale, reports read a table export instead.
 */
export function dynamoLifecycleStore(client: DynamoDBClient, tableName: string): LifecycleStore {
  const doc = documentClient(client);
  const get = (entityId: string, sk: string) =>
    doc.send(new GetCommand({ TableName: tableName, Key: { pk: entityPk(entityId), sk }, ConsistentRead: true }));
  const scan = async (FilterExpression: string, ExpressionAttributeValues: Item): Promise<Item[]> => {
    const items: Item[] = [];
    const pages = paginateScan(
      { client: doc },
      { TableName: tableName, FilterExpression, ExpressionAttributeValues, ConsistentRead: true },
    );
    for await (const page of pages) items.push(...(page.Items ?? []));
    return items;
  };

  return {
    // One request for both items: the projection and the event id's marker, read consistently.
    async load(entityId, eventId) {
      const items = await batchGet(doc, tableName, [
        { pk: entityPk(entityId), sk: STATE_SK },
        { pk: entityPk(entityId), sk: idSk(eventId) },
      ]);
      const state = items.find((item) => item.sk === STATE_SK);
      return { snapshot: state && snapshotOf(state), duplicate: items.some((item) => item.sk === idSk(eventId)) };
    },

    async append(entityId, expectedEventCount, result, requestId) {
      checkContinues(entityId, expectedEventCount, result);
      const TransactItems = appendTransaction(tableName, entityId, expectedEventCount, result);
      try {
        const token = transactionToken(entityId, result.events[0]!.id, expectedEventCount, requestId);
        await doc.send(new TransactWriteCommand({ TransactItems, ClientRequestToken: token }));
        return 'APPENDED';
      } catch (e) {
        return failedAppend(e, entityId, expectedEventCount);
      }
    },

    async getEntity(entityId) {
      const { Item } = await get(entityId, STATE_SK);
      return Item && snapshotOf(Item);
    },

    async listEvents(entityId) {
      return (await queryPrefix(doc, tableName, entityPk(entityId), EVENT_SK_PREFIX)).map(eventOf);
    },

    async listEntities() {
      const items = await scan('sk = :sk', { ':sk': STATE_SK });
      return items
        .map((item) => ({ entityId: String(item.entityId), snapshot: snapshotOf(item) }))
        .sort((a, b) => compare(a.entityId, b.entityId));
    },

    async listAllEvents() {
      const events = (await scan('begins_with(sk, :evt)', { ':evt': EVENT_SK_PREFIX })).map(eventOf);
      return events.sort((a, b) => compare(a.entityId, b.entityId) || a.seq - b.seq);
    },
  };
}

/**
 * `Keys` read consistently in one BatchGetItem; keys DynamoDB leaves unprocessed (throttling) are
 * asked again after a backoff.
 */
async function batchGet(doc: DynamoDBDocumentClient, tableName: string, Keys: Item[]): Promise<Item[]> {
  const items: Item[] = [];
  let request: BatchGetCommandInput['RequestItems'] = { [tableName]: { Keys, ConsistentRead: true } };
  for (let attempt = 1; ; attempt++) {
    const response: BatchGetCommandOutput = await doc.send(new BatchGetCommand({ RequestItems: request }));
    const { Responses, UnprocessedKeys } = response;
    items.push(...(Responses?.[tableName] ?? []));
    if (!UnprocessedKeys?.[tableName]?.Keys?.length) return items;
    if (attempt === BATCH_GET_ATTEMPTS)
      throw new Error(`${tableName}: keys still unprocessed after ${attempt} BatchGetItem requests`);
    request = UnprocessedKeys;
    await sleep(conflictBackoffMs(attempt));
  }
}

/**
 * The writes of one append, in transaction order: the projection (conditioned on the expected
 * `eventCount`, or on absence for a new entity), the trigger's id marker, every event, and the
 * outbox item of a state change (each conditioned on absence).
 */
function appendTransaction(tableName: string, entityId: string, expectedEventCount: number, result: AppendInput) {
  const put = (Item: Item, condition: Item = { ConditionExpression: 'attribute_not_exists(pk)' }) => ({
    Put: { TableName: tableName, Item, ...condition },
  });
  const pk = entityPk(entityId);
  const trigger = result.events[0]!;
  const expected =
    expectedEventCount === 0
      ? undefined
      : {
          ConditionExpression: 'eventCount = :expected',
          ExpressionAttributeValues: { ':expected': expectedEventCount },
        };
  return [
    put({ pk, sk: STATE_SK, entityId, ...result.snapshot, lastEventTime: result.events.at(-1)!.time }, expected),
    put({ pk, sk: idSk(trigger.id), seq: trigger.seq }),
    ...result.events.map((e) => put(eventItem(entityId, e))),
    ...(result.stateChanged ? [put(outboxItem(entityId, result.stateChanged, Date.now()))] : []),
  ];
}

/**
 * What a failed append transaction means: `DUPLICATE` when the trigger's id marker already exists.
 * @throws VersionConflictError when another append got there first (re-read and re-apply).
 * @throws the error itself for any other failure.
 */
function failedAppend(e: unknown, entityId: string, expectedEventCount: number): 'DUPLICATE' {
  // Another transaction on these items, or a retry of this call while its first attempt still runs: re-read and see.
  if (['TransactionConflictException', 'TransactionInProgressException'].includes((e as Error).name))
    throw new VersionConflictError(`${entityId}: ${(e as Error).name}`, { cause: e });
  if (!(e instanceof TransactionCanceledException)) throw e;
  const codes = (e.CancellationReasons ?? []).map((r) => r.Code);
  if (codes[MARKER] === 'ConditionalCheckFailed') return 'DUPLICATE';
  // A failed projection condition, or a concurrent transaction on the same items: someone else appended.
  if (codes.some((c) => c === 'ConditionalCheckFailed' || c === 'TransactionConflict')) {
    const reason = codes[PROJECTION] ?? 'no reason';
    throw new VersionConflictError(`${entityId}: eventCount is no longer ${expectedEventCount} (${reason})`, {
      cause: e,
    });
  }
  throw e;
}

/**
 * The store a handler uses: table `LIFECYCLE_TABLE`, endpoint `AWS_ENDPOINT_URL_DYNAMODB` (DynamoDB Local) when set.
 * @param tracer wraps the DynamoDB client, so each call is an X-Ray subsegment.
 * @throws InvalidInputError when `LIFECYCLE_TABLE` is not set.
 */
export function lifecycleStoreFromEnv(env: Env, tracer: ClientTracer): LifecycleStore {
  if (!env.LIFECYCLE_TABLE) throw new InvalidInputError('LIFECYCLE_TABLE is not set');
  return dynamoLifecycleStore(
    tracer.captureAWSv3Client(new DynamoDBClient({ endpoint: env.AWS_ENDPOINT_URL_DYNAMODB, region: env.AWS_REGION })),
    env.LIFECYCLE_TABLE,
  );
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
