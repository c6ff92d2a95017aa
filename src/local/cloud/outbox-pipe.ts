/**
 * The stack's EventBridge Pipe from a lifecycle table's stream to its bus, run locally from the
 * synthesized template: the same filter pattern, the same enrichment function (invoked through the
 * local runtime), the same target bus, detail-type and source, batch size and retry count. The
 * stream is DynamoDB Local's (polled with the DynamoDB Streams API) or the in-memory store's.
 *
 * Polling is on demand (`pump()`): the local session pumps while it drains, so a replay is
 * deterministic. `pause()`/`resume()` stand for a publisher that died after the commit and came
 * back: the records wait in the stream, as they do for 24 hours on AWS.
 */
import { DescribeTableCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  type _Record,
  DescribeStreamCommand,
  DynamoDBStreamsClient,
  GetRecordsCommand,
  GetShardIteratorCommand,
} from '@aws-sdk/client-dynamodb-streams';
import * as z from 'zod';
import { DefinitionError, LocalServiceError } from '../../core/errors.ts';
import type { MemoryLifecycleStore, StreamRecord } from '../../runtime/lifecycle/store.ts';
import type { PutEventsEntry, PutEventsResult } from './eventbridge/bus.ts';
import { compilePattern, type EventMatcher } from './eventbridge/pattern.ts';
import { type CfnTemplate, type IntrinsicContext, resolveIntrinsics } from './intrinsics.ts';

/** New records of a stream since the last read, in order. */
export interface StreamSource {
  read(): Promise<StreamRecord[]>;
}

/** The in-memory store's writes as a stream. */
export function memoryStreamSource(store: MemoryLifecycleStore): StreamSource {
  let cursor = 0;
  return {
    async read() {
      const records = store.streamRecords.slice(cursor);
      cursor = store.streamRecords.length;
      return structuredClone(records);
    },
  };
}

/**
 * A table's stream in DynamoDB Local, read shard by shard. `skipExisting` starts after what is in
 * the stream now (a session on a shared emulator does not republish another session's changes).
 */
export async function dynamoDbStreamSource(
  client: DynamoDBClient,
  endpoint: string,
  tableName: string,
  skipExisting = true,
): Promise<StreamSource> {
  const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
  const streamArn = Table?.LatestStreamArn;
  if (!streamArn)
    throw new LocalServiceError(
      `table ${tableName} has no stream: the stack's StreamSpecification did not reach DynamoDB Local`,
    );
  // The emulator runs with -sharedDb and accepts any key; the table's client has the dummy ones.
  const streams = new DynamoDBStreamsClient({
    endpoint,
    region: await client.config.region(),
    credentials: client.config.credentials,
  });
  /** Shard id → where to read next; `undefined` once the shard is closed and read to its end. */
  const iterators = new Map<string, string | undefined>();
  const shards = shardReader(streams, streamArn);
  // New shards appear only when one closes (its children): describe the stream first and after a shard ends, not on
  // every read.
  let describe = true;
  const describeShards = async () => {
    describe = false;
    const { StreamDescription } = await streams.send(new DescribeStreamCommand({ StreamArn: streamArn }));
    for (const shard of StreamDescription?.Shards ?? []) {
      const id = shard.ShardId!;
      if (!iterators.has(id)) iterators.set(id, await shards.iterator(id));
    }
  };
  const read = async (): Promise<StreamRecord[]> => {
    const out: StreamRecord[] = [];
    do {
      if (describe) await describeShards();
      for (const [id, start] of iterators) {
        let iterator = start;
        while (iterator) {
          const { Records, NextShardIterator } = await shards.page(id, iterator);
          iterator = NextShardIterator;
          iterators.set(id, iterator);
          if (!iterator) describe = true;
          out.push(...(Records ?? []).map(toStreamRecord));
          if (!Records?.length) break;
        }
      }
      // A shard ended: its children are read in this same read.
    } while (describe);
    return out;
  };
  if (skipExisting) await read();
  return { read };
}

/**
 * Iterators and pages of a stream's shards, each shard's last record remembered. DynamoDB Local can refuse an iterator
 * it handed out while the shard was still empty once the first record is in (TrimmedDataAccessException,
 * aws/aws-sdk-java#2923; seen on an emulator that other sessions' tables share) although nothing was trimmed: such a
 * shard is read again from its start. A refusal after a record was read is a real one and is thrown.
 */
function shardReader(streams: DynamoDBStreamsClient, StreamArn: string) {
  const lastRead = new Map<string, string>();
  /** Where to read `id` from: just after its last record read, else its start. */
  const iterator = async (ShardId: string) =>
    (
      await streams.send(
        new GetShardIteratorCommand({
          StreamArn,
          ShardId,
          ...(lastRead.has(ShardId)
            ? { ShardIteratorType: 'AFTER_SEQUENCE_NUMBER', SequenceNumber: lastRead.get(ShardId) }
            : { ShardIteratorType: 'TRIM_HORIZON' }),
        }),
      )
    ).ShardIterator;
  const records = async (id: string, ShardIterator: string) => {
    try {
      return await streams.send(new GetRecordsCommand({ ShardIterator }));
    } catch (e) {
      if ((e as Error).name !== 'TrimmedDataAccessException' || lastRead.has(id)) throw e;
      const again = await iterator(id);
      return again
        ? streams.send(new GetRecordsCommand({ ShardIterator: again }))
        : { Records: [], NextShardIterator: undefined };
    }
  };
  /** One page of shard `id` from `ShardIterator`. */
  const page = async (id: string, ShardIterator: string) => {
    const { Records, NextShardIterator } = await records(id, ShardIterator);
    const last = Records?.at(-1)?.dynamodb?.SequenceNumber;
    if (last) lastRead.set(id, last);
    return { Records, NextShardIterator };
  };
  return { iterator, page };
}

/** A stream record as the pipe passes it on (what a Lambda event source gives the enrichment). */
function toStreamRecord(r: _Record): StreamRecord {
  return {
    eventID: r.eventID!,
    eventName: r.eventName as StreamRecord['eventName'],
    eventSource: 'aws:dynamodb',
    dynamodb: {
      Keys: r.dynamodb?.Keys ?? {},
      ...(r.dynamodb?.NewImage && { NewImage: r.dynamodb.NewImage }),
      SequenceNumber: r.dynamodb?.SequenceNumber ?? '',
      ...(r.dynamodb?.ApproximateCreationDateTime && {
        ApproximateCreationDateTime: Math.floor(r.dynamodb.ApproximateCreationDateTime.getTime() / 1000),
      }),
    },
  };
}

const PipeProperties = z.object({
  Source: z.unknown(),
  Enrichment: z.unknown().optional(),
  Target: z.unknown(),
  SourceParameters: z
    .object({
      FilterCriteria: z.object({ Filters: z.array(z.object({ Pattern: z.string() })) }).optional(),
      DynamoDBStreamParameters: z
        .object({
          BatchSize: z.number().int().min(1).optional(),
          MaximumRetryAttempts: z.number().int().min(-1).optional(),
        })
        .optional(),
    })
    .optional(),
  TargetParameters: z.object({
    EventBridgeEventBusParameters: z.object({ DetailType: z.string(), Source: z.string() }),
  }),
});

/** A batch the pipe gave up on (its dead-letter queue). */
export interface PipeDeadLetter {
  records: StreamRecord[];
  error: string;
}

export interface LocalPipeOptions {
  source: StreamSource;
  /** Invokes the enrichment function (the local runtime's `invokeFunction`). */
  invoke: (arn: string, payload: unknown) => Promise<unknown>;
  /** Puts entries on the local bus. */
  put: (entries: PutEventsEntry[]) => Promise<PutEventsResult>;
  ctx?: IntrinsicContext;
}

/** PutEvents takes at most 10 entries. */
const PUT_BATCH = 10;

export class LocalPipe {
  /** Batches the pipe gave up on after its retries. */
  readonly deadLetters: PipeDeadLetter[] = [];
  /** How many events the pipe put on the bus. */
  published = 0;
  private paused = false;
  /** Test hook: the next `n` target puts fail, as a bus outage would. */
  private failingPuts = 0;

  private constructor(
    private readonly options: LocalPipeOptions,
    private readonly config: {
      enrichment?: string;
      busName: string;
      detailType: string;
      source: string;
      filters: EventMatcher[];
      batchSize: number;
      attempts: number;
    },
  ) {}

  /**
   * The template's only DynamoDB-stream pipe.
   * @throws DefinitionError when the template has none, or its properties cannot be read.
   */
  static fromTemplate(template: CfnTemplate, options: LocalPipeOptions): LocalPipe {
    const found = Object.entries(template.Resources ?? {}).filter(([, r]) => r.Type === 'AWS::Pipes::Pipe');
    if (found.length !== 1)
      throw new DefinitionError('template', 'Resources', `expected one AWS::Pipes::Pipe, found ${found.length}`);
    const [logicalId, resource] = found[0]!;
    const parsed = PipeProperties.safeParse(resource.Properties ?? {});
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      throw new DefinitionError('template', `Resources.${logicalId}.Properties.${issue.path.join('.')}`, issue.message);
    }
    const p = parsed.data;
    const resolve = (v: unknown) => String(resolveIntrinsics(v, template, options.ctx ?? {}));
    const stream = p.SourceParameters?.DynamoDBStreamParameters;
    const retries = stream?.MaximumRetryAttempts ?? -1;
    return new LocalPipe(options, {
      ...(p.Enrichment !== undefined && { enrichment: resolve(p.Enrichment) }),
      busName: resolve(p.Target),
      detailType: p.TargetParameters.EventBridgeEventBusParameters.DetailType,
      source: p.TargetParameters.EventBridgeEventBusParameters.Source,
      filters: (p.SourceParameters?.FilterCriteria?.Filters ?? []).map((f) => compilePattern(JSON.parse(f.Pattern))),
      batchSize: stream?.BatchSize ?? 100,
      // -1 is "retry until the record expires"; locally that is bounded.
      attempts: (retries < 0 ? 10 : retries) + 1,
    });
  }

  /** Stop reading the stream (the publisher died after the commit); records wait in the stream. */
  pause(): void {
    this.paused = true;
  }

  resume(): void {
    this.paused = false;
  }

  /** Make the next `n` puts to the bus fail (then the pipe's retries take over). */
  failNextPuts(n: number): void {
    this.failingPuts = n;
  }

  /** Read what is new in the stream and publish it; returns how many events were put on the bus. */
  async pump(): Promise<number> {
    if (this.paused) return 0;
    const { filters, batchSize } = this.config;
    const records = (await this.options.source.read()).filter((r) => filters.length === 0 || filters.some((m) => m(r)));
    let put = 0;
    for (let i = 0; i < records.length; i += batchSize) put += await this.deliver(records.slice(i, i + batchSize));
    this.published += put;
    return put;
  }

  /** Enrich and put one batch, retrying the whole batch like the pipe, then dead-letter it. */
  private async deliver(batch: StreamRecord[]): Promise<number> {
    let error: unknown;
    for (let attempt = 1; attempt <= this.config.attempts; attempt++) {
      try {
        const details = this.config.enrichment ? await this.options.invoke(this.config.enrichment, batch) : batch;
        if (!Array.isArray(details)) throw new LocalServiceError('the pipe enrichment did not return an array');
        for (let i = 0; i < details.length; i += PUT_BATCH) {
          if (this.failingPuts > 0) {
            this.failingPuts--;
            throw new LocalServiceError('the bus refused the put (injected)');
          }
          const entries = details.slice(i, i + PUT_BATCH).map((d) => ({
            EventBusName: this.config.busName,
            Source: this.config.source,
            DetailType: this.config.detailType,
            Detail: JSON.stringify(d),
          }));
          const result = await this.options.put(entries);
          const failed = result.Entries.find((e) => e.ErrorCode);
          if (failed) throw new LocalServiceError(`the bus refused an entry: ${failed.ErrorMessage}`);
        }
        return details.length;
      } catch (e) {
        error = e;
      }
    }
    this.deadLetters.push({ records: batch, error: (error as Error).message ?? String(error) });
    return 0;
  }
}
