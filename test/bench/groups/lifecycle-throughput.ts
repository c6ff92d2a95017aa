/**
 * Lead events through DynamoDB Local against raw PutItem on the same emulator, and against the lead
 * events' own transactions replayed raw, at 16 and at 1 in flight, in interleaved rounds.
 */
import { isDeepStrictEqual } from 'node:util';
import { type AttributeValue, DescribeTableCommand, GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, TransactWriteCommand, type TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import type { AgentConfig } from '../../../src/definitions/lifecycle/agent-config.ts';
import { loadAgentConfig } from '../../../src/definitions/lifecycle/loader.ts';
import { startDynamoDbLocal } from '../../../src/local/cloud/dynamodb-local.ts';
import { LifecycleSession } from '../../../src/local/sessions/lifecycle-session.ts';
import { createTable } from '../../runtime/tools/fixtures.ts';
import type { BenchRun } from '../harness.ts';
import { timed } from '../orchestration.ts';
import { countDynamoRequests } from '../usage.ts';
import { BENCH_AGENT, bookMeetingLogs, type LeadLog, leadLanes } from '../workloads.ts';
import { assertLifecycleRan } from './lifecycle-session.ts';

/** The table raw PutItem writes: the leads table's key schema and nothing else (no stream, no TTL). */
const RAW_PUT_TABLE = 'bench-raw-put-item';
/** The table the lead events' own transactions are replayed to: the leads table's key schema and stream. */
const RAW_TRANSACTION_TABLE = 'bench-raw-transact-write';
/** The leads table's stream (lead-lifecycle-stack.ts), checked against the session's table. */
const LEADS_STREAM = { StreamEnabled: true, StreamViewType: 'NEW_IMAGE' } as const;
/** Raw PutItems per round at each concurrency. */
const RAW_PUTS = { 16: 1600, 1: 200 } as const;
/** Raw TransactWriteItems per round at each concurrency. */
const RAW_TRANSACTIONS = { 16: 400, 1: 100 } as const;
type Concurrency = keyof typeof RAW_PUTS;
/**
 * What a round times: raw PutItems; the lead events' transactions replayed as raw
 * TransactWriteItems; lead events through the bus, the Express workflow and the store (`write`:
 * the outbox pipe is paused while timed and publishes afterwards, as the stream is read apart from
 * the table's writes on AWS); the same with the pipe and the listeners run after each wave
 * (`published`: the whole local session).
 */
const KINDS = ['raw', 'transaction', 'write', 'published'] as const;
type Kind = (typeof KINDS)[number];

type DynamoDbLocal = Awaited<ReturnType<typeof startDynamoDbLocal>>;
type Item = Record<string, AttributeValue>;
/** The DynamoDB requests of lead events, by command, and the input of each of their transactions. */
type RequestLog = Pick<ReturnType<typeof countDynamoRequests>, 'requests' | 'transactWrites'>;

/**
 * A lead event's transaction (Puts only: projection, id marker, events, outbox) for the new lead
 * `RAWTX#n` of `table`: every item under the new key and conditioned on its absence (a new lead's
 * write: the projection's `eventCount` condition cannot hold there), with its own request token.
 */
function replayedTransaction(input: Record<string, any>, table: string, n: number): TransactWriteCommandInput {
  return {
    ClientRequestToken: `raw-transaction-${n}`,
    TransactItems: (input.TransactItems as { Put?: { Item: Record<string, unknown> } }[]).map((item) => {
      if (!item.Put) throw new Error(`a lead event's transaction holds only Puts, not ${Object.keys(item).join(', ')}`);
      return {
        Put: {
          TableName: table,
          Item: { ...item.Put.Item, pk: `RAWTX#${n}` },
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      };
    }),
  };
}

export async function leadThroughput(bench: BenchRun): Promise<void> {
  const config = loadAgentConfig(BENCH_AGENT, 'lead-lifecycle');
  const logs = bookMeetingLogs();
  const rounds = Math.max(3, Math.round(Number(process.env.BENCH_ROUNDS ?? 20) / 4));
  const dynamo = await startDynamoDbLocal();
  // The transactions replayed raw go to a second emulator (same jar, same JVM options; busy only in
  // their turn): on one emulator, a second table's stream made the session's stream reads fail
  // (TrimmedDataAccessException) and its transactions took five times as long as alone.
  const replay = await startDynamoDbLocal().catch(async (e) => {
    await dynamo.stop();
    throw e;
  });
  try {
    await createTable(replay.client, RAW_TRANSACTION_TABLE, undefined, LEADS_STREAM);
    const session = await LifecycleSession.start({ lifecycle: 'lead-lifecycle', dynamo, agentConfig: config });
    try {
      await createTable(dynamo.client, RAW_PUT_TABLE);
      const { Table: leads } = await dynamo.client.send(new DescribeTableCommand({ TableName: session.tableName! }));
      if (!isDeepStrictEqual(leads!.StreamSpecification, LEADS_STREAM))
        throw new Error(
          `the leads table's stream is ${JSON.stringify(leads!.StreamSpecification)}, not ${JSON.stringify(LEADS_STREAM)}`,
        );
      await measureThroughput(bench, { session, dynamo, replay, config, logs, rounds });
    } finally {
      await session.stop();
    }
  } finally {
    await Promise.all([dynamo.stop(), replay.stop()]);
  }
}

interface Rig {
  session: LifecycleSession;
  /** The emulator of the session, where raw PutItems also go. */
  dynamo: DynamoDbLocal;
  /** The second emulator, where the lead events' transactions are replayed raw. */
  replay: DynamoDbLocal;
  config: AgentConfig;
  logs: LeadLog[];
  rounds: number;
}

/** Warm every workload up, time them in interleaved rounds, then record the cases, figures and target. */
async function measureThroughput(bench: BenchRun, rig: Rig): Promise<void> {
  const { session, dynamo, replay, config, logs, rounds } = rig;
  const leadEvents = leadEventWaves(session, config, logs);
  // Warm-up (module loading, both JITs), which also counts the DynamoDB requests per lead event and keeps its
  // transactions.
  const requests: RequestLog = { requests: {}, transactWrites: [] };
  const warm = await leadEvents(16, false, requests);
  await leadEvents(16, true);
  const item = await largestProjection(dynamo, session.tableName!, warm.leads);
  const raw = rawWrites(dynamo, replay, item, requests.transactWrites);
  await raw.putItems(RAW_PUTS[16], 16);
  await raw.transactions(RAW_TRANSACTIONS[16], 16);
  const { samples, events } = await interleavedRounds(rounds, raw, leadEvents);

  const itemBytes = JSON.stringify(item).length;
  const transactionItems =
    requests.transactWrites.reduce((n, t) => n + (t.TransactItems as unknown[]).length, 0) /
    requests.transactWrites.length;
  const measured = { rounds, samples, events, itemBytes, transactionItems };
  const c16 = recordRates(bench, 16, measured);
  const c1 = recordRates(bench, 1, measured);
  bench.figures.leadThroughput = {
    rounds,
    rawItemBytes: itemBytes,
    concurrency16: c16,
    concurrency1: c1,
    dynamoRequestsPerEvent: Object.fromEntries(
      Object.entries(requests.requests).map(([command, n]) => [command, n / warm.events]),
    ),
    itemsPerTransaction: transactionItems,
  };
  bench.target(
    'leadEvents.overRawPutItem',
    `lead events/s through the bus, the Express workflow and DynamoDB Local / raw PutItem/s on the same emulator, 16 in flight each (medians of ${rounds} interleaved rounds; ${c1.leadEventsOverRawPutItem.toFixed(2)} at concurrency 1, ${c16.publishedOverRawPutItem.toFixed(2)} with each wave published through the outbox pipe; the lead events' own transactions alone, replayed raw, reach ${c16.rawTransactionsOverRawPutItem.toFixed(2)})`,
    c16.leadEventsOverRawPutItem,
    { min: 0.3 },
  );
}

/**
 * `concurrency` lanes of sample leads: all lanes' k-th events in one put, the wave's executions
 * done before the next (with `publish`, also the pipe and the listeners: `session.drain()`).
 * Then everything is published and every event checked, untimed. `usage` gets the waves'
 * DynamoDB requests by command and their transactions.
 */
function leadEventWaves(session: LifecycleSession, config: AgentConfig, logs: readonly LeadLog[]) {
  let tags = 0;
  return async (concurrency: Concurrency, publish: boolean, usage?: RequestLog) => {
    const lanes = leadLanes(logs, concurrency, `t${tags++}`);
    const lines = lanes.map((lane) => lane.flatMap((log) => log.lines));
    const counter = usage && countDynamoRequests();
    if (!publish) session.pipe.pause();
    const { ms } = await timed(async () => {
      for (let k = 0; k < lines[0]!.length; k++) {
        await session.put(lines.map((lane) => lane[k]!.event));
        await session.drain();
      }
    }).finally(() => {
      counter?.stop();
      session.pipe.resume();
    });
    if (counter) Object.assign(usage!, { requests: counter.requests, transactWrites: counter.transactWrites });
    await session.drain();
    await assertLifecycleRan(session, config, lanes.flat());
    return { ms, events: lines.length * lines[0]!.length, leads: lanes.flat() };
  };
}

type LeadEvents = ReturnType<typeof leadEventWaves>;

/** A lead-sized item: the largest projection of these leads, as the store wrote it. */
async function largestProjection(dynamo: DynamoDbLocal, table: string, leads: readonly LeadLog[]): Promise<Item> {
  const get = (leadId: string) =>
    new GetItemCommand({ TableName: table, Key: { pk: { S: `ENTITY#${leadId}` }, sk: { S: 'STATE' } } });
  const projections = await Promise.all(leads.map((l) => dynamo.client.send(get(l.leadId))));
  return projections.map((r) => r.Item!).sort((a, b) => JSON.stringify(b).length - JSON.stringify(a).length)[0]!;
}

/** Milliseconds to run `send(i)` for i = 0 … `count` - 1, `concurrency` at a time. */
async function inFlight(count: number, concurrency: Concurrency, send: (i: number) => Promise<unknown>) {
  let started = 0;
  const worker = async () => {
    while (started < count) await send(started++);
  };
  return (await timed(() => Promise.all(Array.from({ length: concurrency }, worker)))).ms;
}

/** The raw writes the lead events are compared with, each under new keys. */
function rawWrites(dynamo: DynamoDbLocal, replay: DynamoDbLocal, item: Item, transactWrites: Record<string, any>[]) {
  const doc = DynamoDBDocumentClient.from(replay.client);
  let puts = 0;
  let transactions = 0;
  const putItem = () => new PutItemCommand({ TableName: RAW_PUT_TABLE, Item: { ...item, pk: { S: `RAW#${puts++}` } } });
  const transaction = (i: number) => {
    const input = transactWrites[i % transactWrites.length]!;
    return new TransactWriteCommand(replayedTransaction(input, RAW_TRANSACTION_TABLE, transactions++));
  };
  return {
    /** `count` PutItems of that item under new keys, `concurrency` in flight. */
    putItems: (count: number, concurrency: Concurrency) =>
      inFlight(count, concurrency, () => dynamo.client.send(putItem())),
    /**
     * `count` of the warm-up's lead event transactions again, under new keys on a table like the
     * leads table (on the second emulator), `concurrency` in flight.
     */
    transactions: (count: number, concurrency: Concurrency) =>
      inFlight(count, concurrency, (i) => doc.send(transaction(i))),
  };
}

type Samples = Record<Concurrency, Record<Kind, number[]>>;

/** `rounds` rounds of every kind at both concurrencies: milliseconds per round, and the lead events of a round. */
async function interleavedRounds(rounds: number, raw: ReturnType<typeof rawWrites>, leadEvents: LeadEvents) {
  const kinds = () => ({
    raw: [] as number[],
    transaction: [] as number[],
    write: [] as number[],
    published: [] as number[],
  });
  const samples: Samples = { 16: kinds(), 1: kinds() };
  const events = { 16: 0, 1: 0 };
  for (let r = 0; r < rounds; r++)
    // Rotate who goes first, so none always runs on another's garbage or a quieter machine.
    for (const concurrency of [16, 1] as const)
      for (let i = 0; i < KINDS.length; i++) {
        const kind = KINDS[(r + i) % KINDS.length]!;
        if (kind === 'raw') samples[concurrency].raw.push(await raw.putItems(RAW_PUTS[concurrency], concurrency));
        else if (kind === 'transaction')
          samples[concurrency].transaction.push(await raw.transactions(RAW_TRANSACTIONS[concurrency], concurrency));
        else {
          const run = await leadEvents(concurrency, kind === 'published');
          events[concurrency] = run.events;
          samples[concurrency][kind].push(run.ms);
        }
      }
  return { samples, events };
}

interface Measured {
  rounds: number;
  samples: Samples;
  events: Record<Concurrency, number>;
  itemBytes: number;
  transactionItems: number;
}

/** Record the cases of one concurrency and hand back their rates (from the median rounds) and ratios. */
function recordRates(bench: BenchRun, concurrency: Concurrency, measured: Measured) {
  const { rounds, samples, events, itemBytes, transactionItems } = measured;
  const described = `${rounds} rounds, interleaved`;
  const record = (kind: Kind, description: string) => {
    const ops =
      kind === 'raw'
        ? RAW_PUTS[concurrency]
        : kind === 'transaction'
          ? RAW_TRANSACTIONS[concurrency]
          : events[concurrency];
    const names = {
      raw: 'rawPutItem',
      transaction: 'rawTransactWrite',
      write: 'leadEvents',
      published: 'leadEventsPublished',
    };
    const result = bench.samples({
      name: `lifecycle.throughput.${names[kind]}.c${concurrency}`,
      description: `${description}, ${concurrency} in flight: ${described}`,
      warmupIterations: 1,
      opsPerIteration: ops,
      unit: kind === 'raw' ? 'puts' : kind === 'transaction' ? 'transactions' : 'events',
      samples: samples[concurrency][kind],
    });
    // The median round: one slow round (a noisy neighbour) moves no ratio.
    return (ops * 1000) / result.p50Ms;
  };
  const lanes = `${BENCH_AGENT} sample leads in ${concurrency} lanes (${events[concurrency]} events with redeliveries, each wave's executions done before the next)`;
  const raw = record(
    'raw',
    `raw PutItem of a ${itemBytes}-byte lead projection to a plain table on the same DynamoDB Local`,
  );
  const transaction = record(
    'transaction',
    `the lead events' own TransactWriteItems (${transactionItems.toFixed(2)} items each) replayed under new keys to a table with the leads table's stream, on a second DynamoDB Local`,
  );
  const write = record(
    'write',
    `${lanes}: bus → Express state machine → handlers → DynamoDB Local (the outbox pipe publishes after the timed waves)`,
  );
  const published = record('published', `${lanes}, each wave also published: + outbox pipe → bus → listeners`);
  return {
    rawPutItemPerSec: raw,
    rawTransactionsPerSec: transaction,
    rawTransactionsOverRawPutItem: transaction / raw,
    leadEventsPerSec: write,
    leadEventsOverRawPutItem: write / raw,
    leadEventsOverRawTransactions: write / transaction,
    publishedLeadEventsPerSec: published,
    publishedOverRawPutItem: published / raw,
  };
}
