/**
 * The benchmark suite (`npm run bench`): speed and memory of the hot paths, measured here and never
 * by timed assertions in tests. Prints a table and writes `.stepwise/bench/results.json`.
 *
 *   npm run bench                          every group (about 4 minutes on 2 cores)
 *   npm run bench -- eventbridge synth     only the groups whose name contains one of the words
 *   npm run -s bench -- --json             the whole document (targets, figures, results) on stdout, progress on stderr
 *   npm run -s bench -- --markdown         the README's tables from the same run
 *   BENCH_ROUNDS=5 npm run bench -- orchestration   fewer interleaved rounds (a quick check while developing)
 *
 * Each repeated case warms up, then runs a fixed number of iterations (see harness.ts); one-shot
 * cases time what only happens once per process (a cold synth, a session start, a first email).
 * The session groups start DynamoDB Local (Java 17+) and always stop it.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { DescribeTableCommand, GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, TransactWriteCommand, type TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { performance } from 'node:perf_hooks';
import { loadProject } from '../../src/project/project.ts';
import { addStepwiseStacks } from '../../src/cdk/stepwise-app.ts';
import { compilePattern, matches } from '../../src/local/eventbridge/pattern.ts';
import { startDynamoDbLocal } from '../../src/local/dynamodb-local.ts';
import { LifecycleSession } from '../../src/local/lifecycle-session.ts';
import { synthesize, synthProject } from '../../src/local/synth.ts';
import { executionUsage, WorkflowSession, type RunResult } from '../../src/local/workflow-session.ts';
import { stateTransitions, stepTrail } from '../../src/local/history.ts';
import type { StepOutput } from '../../src/runtime/contracts.ts';
import { lifecycleBusName, lifecycleStackName } from '../../src/cdk/stacks/lifecycle-stack.ts';
import { loadWorkflowFrom } from '../../src/definitions/workflow/loader.ts';
import { PROJECT_ROOT, STATEMACHINES_DIR, STATE_DIR as STEPWISE_DIR } from '../../src/core/paths.ts';
import { loadAgentConfig, loadLifecycle } from '../../src/definitions/lifecycle/loader.ts';
import { BenchRun, gcExposed } from './harness.ts';
import { costPer1000, gbSeconds, loadPrices, meanCounts, type ExecutionCounts } from '../../src/evals/cost.ts';
import { OfflineModel } from '../../src/runtime/offline-model.ts';
import { monolithicStep } from '../../src/runtime/steps/single-prompt.ts';
import { loadPlugin } from '../../src/runtime/plugin.ts';
import { routeToolSpec, systemPrompt, toolSpecs } from '../../src/runtime/steps/prompt.ts';
import { countDynamoRequests, estimatingModel } from './usage.ts';
import { ENTRY_METADATA, WORKFLOW_DIR_METADATA } from '../../src/cdk/metadata.ts';
import { createTable } from '../runtime/tools/fixtures.ts';
import { largeAttachment, MIME_BOMBS } from '../runtime/triggers/email/mime-bombs.ts';
import { DEFAULT_POLICY, isRejection, parseInbound } from '../../src/runtime/triggers/email/checks.ts';
import { measureBundles, type BundleFigure, type LambdaBuild } from './bundles.ts';
import { benchMarkdown } from './markdown.ts';
import { startup } from './startup.ts';
import { studioOpen } from './studio.ts';
import { chainOrchestration, emailIngestor, FLOW_SAMPLES, flowSample, langGraphOrchestration, runtimeOrchestration, timed, type FlowRun, type Orchestration } from './orchestration.ts';
import { applyAll, appliedEvents, BENCH_AGENT, bookMeetingLogs, leadBusEnvelopes, leadLanes, renamed, replayLog, WARRANTY_SAMPLE, withMessageId, type LeadLog } from './workloads.ts';
import { exampleEnv } from '../support/config.ts';

const project = await loadProject();

const ENV = 'dev';
/** The lifecycle the lifecycle groups run: the lead example. */
const LEAD_LIFECYCLE = 'lead-lifecycle';
const RESULTS_FILE = join(STEPWISE_DIR, 'bench', 'results.json');

/** Pure calls add their results here: a module-level write the JIT must keep, so it cannot drop the work being timed. */
let sink = 0;

interface Group {
  name: string;
  run: (bench: BenchRun) => Promise<void>;
}

// ---------------------------------------------------------------------------------------------
// 1. Workflow loading

async function workflowLoading(bench: BenchRun): Promise<void> {
  const dir = join(STATEMACHINES_DIR, 'warranty-email');
  const steps = loadWorkflowFrom(dir).steps.length;
  await bench.repeated({
    name: 'workflow.loadWorkflowFrom',
    description: `loadWorkflowFrom(statemachines/warranty-email), uncached: read, parse and validate the manifest and ${steps} step files`,
    warmupIterations: 20,
    iterations: 200,
    unit: 'loads',
    fn: () => {
      sink += loadWorkflowFrom(dir).steps.length;
    },
  });
}

// ---------------------------------------------------------------------------------------------
// 2. In-process synth of the project app

async function synth(bench: BenchRun): Promise<void> {
  // Must be the process's first synth to be cold: synthProject caches per environment.
  await bench.once({
    name: 'synth.project.first',
    description: `synthProject('${ENV}') first call in the process: JIT-cold build and synth of every stack, then cached`,
    unit: 'synths',
    fn: () => synthProject(ENV),
  });
  // synthesize() has no cache: the same build synthProject runs, but warm.
  await bench.repeated({
    name: 'synth.project.fresh',
    description: `synthesize(addStepwiseStacks(app, exampleEnv('${ENV}'), project)): a full synth of every stack, bypassing the cache`,
    warmupIterations: 1,
    iterations: 15,
    unit: 'synths',
    fn: () => {
      sink += synthesize((app) => addStepwiseStacks(app, exampleEnv(ENV), project), { env: ENV }).stateMachines.length;
    },
  });
  // A cache hit takes less than the timer's own overhead: time them in batches.
  const BATCH = 1_000;
  await bench.repeated({
    name: 'synth.project.cached',
    description: `synthProject('${ENV}') once cached (what every later session start pays), ${BATCH} calls per iteration`,
    warmupIterations: 10,
    iterations: 1_000,
    opsPerIteration: BATCH,
    unit: 'calls',
    fn: async () => {
      for (let i = 0; i < BATCH; i++) sink += (await synthProject(ENV)).stateMachines.length;
    },
  });
}

// ---------------------------------------------------------------------------------------------
// 3. Lifecycle core

async function lifecycleCore(bench: BenchRun): Promise<void> {
  const def = loadLifecycle('lead-lifecycle');
  const config = loadAgentConfig(BENCH_AGENT, 'lead-lifecycle');
  const leads = bookMeetingLogs().map(appliedEvents);
  const events = leads.reduce((n, lead) => n + lead.length, 0);
  await bench.repeated({
    name: 'lifecycle.applyEvent',
    description: `applyEvent over the ${leads.length} ${BENCH_AGENT} sample leads (${events} events, redeliveries removed as the store does), each from initialSnapshot`,
    warmupIterations: 100,
    iterations: 2_000,
    opsPerIteration: events,
    unit: 'events',
    fn: () => {
      for (const lead of leads) sink += applyAll(def, config, lead).version;
    },
  });
}

// ---------------------------------------------------------------------------------------------
// 4. EventBridge pattern matching

async function eventBridge(bench: BenchRun): Promise<void> {
  const template = (await synthProject(ENV)).templates[lifecycleStackName(LEAD_LIFECYCLE, ENV)];
  if (!template) throw new Error(`the ${ENV} app has no ${lifecycleStackName(LEAD_LIFECYCLE, ENV)} stack`);
  // The rules' patterns as the template declares them (the bus compiles the same values).
  const patterns = Object.values(template.Resources ?? {})
    .filter((r) => r.Type === 'AWS::Events::Rule' && r.Properties?.EventPattern !== undefined)
    .map((r) => r.Properties!.EventPattern);
  const def = loadLifecycle('lead-lifecycle');
  const envelopes = await leadBusEnvelopes(template, lifecycleBusName(LEAD_LIFECYCLE, ENV), def, loadAgentConfig(BENCH_AGENT, 'lead-lifecycle'), bookMeetingLogs());
  const pairs = envelopes.length * patterns.length;
  const matchers = patterns.map((p) => compilePattern(p));
  const matched = envelopes.reduce((n, e) => n + matchers.filter((m) => m(e)).length, 0);
  if (matched === 0) throw new Error('no envelope matches any rule: the workload measures nothing');
  const workload = `${envelopes.length} leads-bus envelopes × ${patterns.length} rule patterns of the lifecycle stack (${matched} matches)`;

  await bench.repeated({
    name: 'eventbridge.compilePattern',
    description: `compilePattern of the ${patterns.length} rule patterns of the lifecycle stack`,
    warmupIterations: 200,
    iterations: 5_000,
    opsPerIteration: patterns.length,
    unit: 'patterns',
    fn: () => {
      for (const p of patterns) sink += compilePattern(p).length;
    },
  });
  await bench.repeated({
    name: 'eventbridge.match.compiled',
    description: `compiled matchers (what the local bus runs per event): ${workload}`,
    warmupIterations: 200,
    iterations: 5_000,
    opsPerIteration: pairs,
    unit: 'matches',
    fn: () => {
      for (const e of envelopes) for (const m of matchers) sink += m(e) ? 1 : 0;
    },
  });
  await bench.repeated({
    name: 'eventbridge.matches.oneShot',
    description: `matches(pattern, event), which validates and compiles on every call: ${workload}`,
    warmupIterations: 20,
    iterations: 500,
    opsPerIteration: pairs,
    unit: 'matches',
    fn: () => {
      for (const e of envelopes) for (const p of patterns) sink += matches(p, e) ? 1 : 0;
    },
  });
}

// ---------------------------------------------------------------------------------------------
// 5a. The lead lifecycle through the generated Express ASL

/**
 * Every execution succeeded, nothing was dead-lettered, and every event is accounted for: each
 * lead's log is its events applied once each in order (with the events they raised) and its
 * snapshot is the replay of that log.
 */
async function assertLifecycleRan(session: LifecycleSession, config: ReturnType<typeof loadAgentConfig>, leads: readonly LeadLog[]): Promise<void> {
  const failed = session.failedExecutions.length + session.sentDeadLetters.length + session.listenerDeadLetters.length;
  if (failed) throw new Error(`${session.failedExecutions.length} failed executions, ${session.sentDeadLetters.length} dead-lettered events, ${session.listenerDeadLetters.length} failed listener deliveries`);
  // JSON drops undefined fields, which a stored snapshot does not have.
  const plain = (value: unknown) => JSON.parse(JSON.stringify(value)) as unknown;
  for (const lead of leads) {
    const expected = replayLog(session.definition, config, appliedEvents(lead));
    const [actual, log] = await Promise.all([session.store.getEntity(lead.leadId), session.store.listEvents(lead.leadId)]);
    if (!isDeepStrictEqual(plain(log), plain(expected.log)))
      throw new Error(`${lead.leadId}: logged ${log.map((e) => e.id).join(' ')}, expected ${expected.log.map((e) => e.id).join(' ')}`);
    if (!isDeepStrictEqual(plain(actual), plain(expected.snapshot)))
      throw new Error(`${lead.leadId}: ended ${JSON.stringify(actual)}, a replay of its log gives ${JSON.stringify(expected.snapshot)}`);
  }
}

async function lifecycleSession(bench: BenchRun): Promise<void> {
  const config = loadAgentConfig(BENCH_AGENT, 'lead-lifecycle');
  const logs = bookMeetingLogs();
  const lines = logs.reduce((n, log) => n + log.lines.length, 0);
  const session = await bench.once({
    name: 'lifecycle.session.start',
    description: `LifecycleSession.start({ lifecycle: 'lead-lifecycle', store: 'memory' }): synth of the lifecycle stack, runtime and bus`,
    unit: 'starts',
    fn: () => LifecycleSession.start({ lifecycle: 'lead-lifecycle', store: 'memory', agentConfig: config }),
  });
  if (!session) return;
  try {
    let round = 0;
    /** The sample leads under fresh ids, replayed one after the other, each event drained before the next. */
    const replayAll = async () => {
      const copies = logs.map((log) => renamed(log, `r${round++}`));
      for (const copy of copies) await session.replay(copy.lines);
      return copies;
    };
    const workload = `the ${logs.length} ${BENCH_AGENT} sample leads (${lines} events with redeliveries), one event at a time`;
    await bench.once({
      name: 'lifecycle.session.replay.first',
      description: `first replay of ${workload}: loads the handler modules`,
      opsPerIteration: lines,
      unit: 'events',
      fn: replayAll,
    });
    await bench.repeated({
      name: 'lifecycle.session.replay',
      description: `replay of ${workload}: bus → Express state machine → memory store → listeners`,
      warmupIterations: 2,
      iterations: 30,
      opsPerIteration: lines,
      unit: 'events',
      fn: async () => {
        await replayAll();
      },
    });

    // Leads are independent: the k-th event of every lead goes out in one PutEvents, drained before the next.
    const COPIES = 4;
    const concurrentLeads = logs.length * COPIES;
    const rounds = Math.max(...logs.map((log) => log.lines.length));
    let lastCopies: LeadLog[] = [];
    await bench.repeated({
      name: 'lifecycle.session.concurrent',
      description: `${concurrentLeads} leads at once (${COPIES} copies of each sample, ${lines * COPIES} events): each lead's k-th event in one put, drained per round`,
      warmupIterations: 1,
      iterations: 15,
      opsPerIteration: lines * COPIES,
      unit: 'events',
      fn: async () => {
        const copies = Array.from({ length: COPIES }, () => logs.map((log) => renamed(log, `c${round++}`))).flat();
        for (let k = 0; k < rounds; k++) {
          await session.put(copies.flatMap((copy) => copy.lines[k]?.event ?? []));
          await session.drain();
        }
        lastCopies = copies;
      },
    });
    await assertLifecycleRan(session, config, lastCopies);
  } finally {
    await session.stop();
  }
}

// ---------------------------------------------------------------------------------------------
// 5c. Lead events through DynamoDB Local against raw PutItem on the same emulator

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
      return { Put: { TableName: table, Item: { ...item.Put.Item, pk: `RAWTX#${n}` }, ConditionExpression: 'attribute_not_exists(pk)' } };
    }),
  };
}

async function leadThroughput(bench: BenchRun): Promise<void> {
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
      if (!isDeepStrictEqual(leads!.StreamSpecification, LEADS_STREAM)) throw new Error(`the leads table's stream is ${JSON.stringify(leads!.StreamSpecification)}, not ${JSON.stringify(LEADS_STREAM)}`);
      let tags = 0;
      /**
       * `concurrency` lanes of sample leads: all lanes' k-th events in one put, the wave's executions
       * done before the next (with `publish`, also the pipe and the listeners: `session.drain()`).
       * Then everything is published and every event checked, untimed. `usage` gets the waves'
       * DynamoDB requests by command and their transactions.
       */
      const leadEvents = async (concurrency: Concurrency, publish: boolean, usage?: Pick<ReturnType<typeof countDynamoRequests>, 'requests' | 'transactWrites'>) => {
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

      // Warm-up (module loading, both JITs), which also counts the DynamoDB requests per lead event and keeps its transactions.
      const requests = { requests: {} as Record<string, number>, transactWrites: [] as Record<string, any>[] };
      const warm = await leadEvents(16, false, requests);
      await leadEvents(16, true);
      // A lead-sized item: the largest projection of the sample leads, as the store wrote it.
      const projections = await Promise.all(
        warm.leads.map((l) => dynamo.client.send(new GetItemCommand({ TableName: session.tableName!, Key: { pk: { S: `ENTITY#${l.leadId}` }, sk: { S: 'STATE' } } }))),
      );
      const item = projections.map((r) => r.Item!).sort((a, b) => JSON.stringify(b).length - JSON.stringify(a).length)[0]!;
      /** Milliseconds to run `send(i)` for i = 0 … `count` - 1, `concurrency` at a time. */
      const inFlight = async (count: number, concurrency: Concurrency, send: (i: number) => Promise<unknown>) => {
        let started = 0;
        const worker = async () => {
          while (started < count) await send(started++);
        };
        return (await timed(() => Promise.all(Array.from({ length: concurrency }, worker)))).ms;
      };
      let puts = 0;
      /** `count` PutItems of that item under new keys, `concurrency` in flight. */
      const rawPutItems = (count: number, concurrency: Concurrency) =>
        inFlight(count, concurrency, () => dynamo.client.send(new PutItemCommand({ TableName: RAW_PUT_TABLE, Item: { ...item, pk: { S: `RAW#${puts++}` } } })));
      await rawPutItems(RAW_PUTS[16], 16);
      const doc = DynamoDBDocumentClient.from(replay.client);
      const { transactWrites } = requests;
      let transactions = 0;
      /** `count` of the warm-up's lead event transactions again, under new keys on a table like the leads table (on the second emulator), `concurrency` in flight. */
      const rawTransactions = (count: number, concurrency: Concurrency) =>
        inFlight(count, concurrency, (i) => doc.send(new TransactWriteCommand(replayedTransaction(transactWrites[i % transactWrites.length]!, RAW_TRANSACTION_TABLE, transactions++))));
      await rawTransactions(RAW_TRANSACTIONS[16], 16);

      const kinds = () => ({ raw: [] as number[], transaction: [] as number[], write: [] as number[], published: [] as number[] });
      const samples = { 16: kinds(), 1: kinds() };
      const events = { 16: 0, 1: 0 };
      for (let r = 0; r < rounds; r++)
        for (const concurrency of [16, 1] as const)
          // Rotate who goes first, so none always runs on another's garbage or a quieter machine.
          for (let i = 0; i < KINDS.length; i++) {
            const kind = KINDS[(r + i) % KINDS.length]!;
            if (kind === 'raw') samples[concurrency].raw.push(await rawPutItems(RAW_PUTS[concurrency], concurrency));
            else if (kind === 'transaction') samples[concurrency].transaction.push(await rawTransactions(RAW_TRANSACTIONS[concurrency], concurrency));
            else {
              const run = await leadEvents(concurrency, kind === 'published');
              events[concurrency] = run.events;
              samples[concurrency][kind].push(run.ms);
            }
          }

      const itemBytes = JSON.stringify(item).length;
      const transactionItems = requests.transactWrites.reduce((n, t) => n + (t.TransactItems as unknown[]).length, 0) / requests.transactWrites.length;
      const perSec = (concurrency: Concurrency) => {
        const described = `${rounds} rounds, interleaved`;
        const record = (kind: (typeof KINDS)[number], description: string) => {
          const ops = kind === 'raw' ? RAW_PUTS[concurrency] : kind === 'transaction' ? RAW_TRANSACTIONS[concurrency] : events[concurrency];
          const names = { raw: 'rawPutItem', transaction: 'rawTransactWrite', write: 'leadEvents', published: 'leadEventsPublished' };
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
        const raw = record('raw', `raw PutItem of a ${itemBytes}-byte lead projection to a plain table on the same DynamoDB Local`);
        const transaction = record('transaction', `the lead events' own TransactWriteItems (${transactionItems.toFixed(2)} items each) replayed under new keys to a table with the leads table's stream, on a second DynamoDB Local`);
        const write = record('write', `${lanes}: bus → Express state machine → handlers → DynamoDB Local (the outbox pipe publishes after the timed waves)`);
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
      };
      const c16 = perSec(16);
      const c1 = perSec(1);
      bench.figures.leadThroughput = {
        rounds,
        rawItemBytes: itemBytes,
        concurrency16: c16,
        concurrency1: c1,
        dynamoRequestsPerEvent: Object.fromEntries(Object.entries(requests.requests).map(([command, n]) => [command, n / warm.events])),
        itemsPerTransaction: transactionItems,
      };
      bench.target(
        'leadEvents.overRawPutItem',
        `lead events/s through the bus, the Express workflow and DynamoDB Local / raw PutItem/s on the same emulator, 16 in flight each (medians of ${rounds} interleaved rounds; ${c1.leadEventsOverRawPutItem.toFixed(2)} at concurrency 1, ${c16.publishedOverRawPutItem.toFixed(2)} with each wave published through the outbox pipe; the lead events' own transactions alone, replayed raw, reach ${c16.rawTransactionsOverRawPutItem.toFixed(2)})`,
        c16.leadEventsOverRawPutItem,
        { min: 0.3 },
      );
    } finally {
      await session.stop();
    }
  } finally {
    await Promise.all([dynamo.stop(), replay.stop()]);
  }
}

// ---------------------------------------------------------------------------------------------
// 5b. A warranty email through the synthesized ASL (offline model)

/** The route an email took, to check every iteration did the same work. */
const routeOf = (result: RunResult) => `${result.status}: ${result.steps.map((s) => `${s.name}→${s.next}`).join(' ')}`;

async function warrantySession(bench: BenchRun): Promise<void> {
  // Synthesized beforehand (untimed, cached for the process) so the start measures the session, not the synth.
  synthProject(ENV);
  const historyDir = mkdtempSync(join(tmpdir(), 'stepwise-bench-history-'));
  try {
    const session = await bench.once({
      name: 'warranty.session.start',
      // The JVM is a process of its own: its memory is not in this process's deltas.
      description: "WorkflowSession.start({ workflow: 'warranty-email', model: offline }), app already synthesized: DynamoDB Local (JVM), its tables, the runtime",
      unit: 'starts',
      // Executions are stored as `stepwise run` stores them, in a folder deleted afterwards.
      fn: () => WorkflowSession.start({ workflow: 'warranty-email', env: ENV, model: 'offline', logLevel: 'SILENT', historyDir }),
    });
    if (!session) return;
    try {
      const raw = readFileSync(WARRANTY_SAMPLE, 'utf8');
      let n = 0;
      const processOne = () => session.deliverEmail(withMessageId(raw, `bench-${n++}`), WARRANTY_SAMPLE);
      const first = await bench.once({
        name: 'warranty.email.first',
        description: 'first valid-warranty.eml of the session: ingress, 4 steps, outbox; loads the handler modules',
        unit: 'emails',
        fn: processOne,
      });
      if (!first) return;
      if (first.status !== 'SUCCEEDED') throw new Error(`the sample email did not succeed: ${first.reason}`);
      const expected = routeOf(first);
      const deviations: string[] = [];
      await bench.repeated({
        name: 'warranty.email',
        description: `valid-warranty.eml under a new Message-ID each time (${first.steps.length} steps, offline model, DynamoDB Local)`,
        warmupIterations: 3,
        iterations: 60,
        unit: 'emails',
        fn: async () => {
          const result = await processOne();
          if (routeOf(result) !== expected) deviations.push(routeOf(result));
        },
      });
      if (deviations.length) throw new Error(`${deviations.length} emails took another route than ${expected}, e.g. ${deviations[0]}`);
    } finally {
      await session.close();
    }
  } finally {
    rmSync(historyDir, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------------------------
// 6. The five flows under three orchestrations of the same handlers, interleaved per input

const ORCHESTRATIONS = ['runtime', 'chain', 'langgraph'] as const;
type OrchestrationName = (typeof ORCHESTRATIONS)[number];

async function orchestration(bench: BenchRun): Promise<void> {
  synthProject(ENV);
  const rounds = Number(process.env.BENCH_ROUNDS ?? 20);
  // No stored histories: the chain and LangGraph write none either.
  const session = await WorkflowSession.start({ workflow: 'warranty-email', env: ENV, model: 'offline', logLevel: 'SILENT', historyDir: false });
  try {
    const variants: Record<OrchestrationName, Orchestration> = {
      runtime: runtimeOrchestration(session),
      chain: chainOrchestration(session),
      langgraph: langGraphOrchestration(session),
    };
    const ingestEmail = emailIngestor(session);
    const dir = session.workflow.dir;
    const samples: Record<OrchestrationName, number[]> = { runtime: [], chain: [], langgraph: [] };
    const flows = new Map<string, FlowRun>();
    let n = 0;
    const runOnce = async (variant: OrchestrationName, flow: string): Promise<number> => {
      const { input, name } = await ingestEmail(flowSample(dir, flow), `orch-${n++}`);
      const { ms, value } = await timed(() => variants[variant](input, name));
      const first = flows.get(flow);
      if (!first) flows.set(flow, value);
      else if (first.trail.join() !== value.trail.join()) throw new Error(`${flow} under ${variant} took ${value.trail.join(' → ')}, not ${first.trail.join(' → ')}`);
      return ms;
    };
    // Warm-up: every handler module loaded and JIT-warm under every orchestration.
    for (let r = 0; r < 2; r++) for (const flow of FLOW_SAMPLES) for (const v of ORCHESTRATIONS) await runOnce(v, flow);
    for (let r = 0; r < rounds; r++)
      for (const [i, flow] of FLOW_SAMPLES.entries())
        for (let k = 0; k < ORCHESTRATIONS.length; k++) {
          // Rotate who goes first, so none always runs on a cache another warmed.
          const variant = ORCHESTRATIONS[(r + i + k) % ORCHESTRATIONS.length]!;
          samples[variant].push(await runOnce(variant, flow));
        }
    const describe: Record<OrchestrationName, string> = {
      runtime: 'the local runtime: the synthesized ASL in the interpreter',
      chain: 'a plain in-process loop over the same handlers (Task, ResultSelector, Choice, Catch by hand)',
      langgraph: 'the same graph in LangGraph.js (one node per step, conditional edges, errors to the fallback)',
    };
    const means = {} as Record<OrchestrationName, number>;
    for (const v of ORCHESTRATIONS) {
      means[v] = bench.samples({
        name: `orchestration.${v}`,
        description: `${describe[v]}: the ${FLOW_SAMPLES.length} flow samples, ${rounds} rounds interleaved with the other orchestrations (offline model, DynamoDB Local)`,
        warmupIterations: 2 * FLOW_SAMPLES.length,
        unit: 'emails',
        samples: samples[v],
      }).meanMs;
    }
    const perFlow = Object.fromEntries([...flows].map(([flow, run]) => [flow, { steps: run.trail, modelCalls: run.usage.modelCalls, usage: run.usage, handlerMs: run.handlerMs }]));
    const calls = FLOW_SAMPLES.map((f) => flows.get(f)!.usage.modelCalls);
    const meanCalls = calls.reduce((a, b) => a + b, 0) / calls.length;
    bench.figures.orchestration = {
      rounds,
      meanMsPerEmail: means,
      runtimeOverChain: means.runtime / means.chain,
      langGraphOverChain: means.langgraph / means.chain,
      runtimeOverheadMsPerEmail: means.runtime - means.chain,
      langGraphOverheadMsPerEmail: means.langgraph - means.chain,
      flows: perFlow,
    };
    bench.target('modelCalls.validWarranty', 'model calls for the valid-warranty sample (flow 01 → 02 → 03a → 05)', flows.get('valid-warranty')!.usage.modelCalls, { max: 2 });
    bench.target('modelCalls.meanOverFlows', `mean model calls over the ${FLOW_SAMPLES.length} flow samples`, meanCalls, { max: 1.6 });
    bench.target('orchestration.runtimeOverLangGraph', 'local runtime time per email / LangGraph.js time per email, interleaved (≤ 1: the runtime keeps its lead)', means.runtime / means.langgraph, { max: 1 });
  } finally {
    await session.close();
  }
}

// ---------------------------------------------------------------------------------------------
// 7. Cost per 1,000 executions from measured counts: fast path on (as deployed) and off (model path)

/** The model the cost is computed for: the id the environment config pins (see stepwise.config.ts). */
const COST_MODEL_ID = exampleEnv(ENV).modelId ?? loadWorkflowFrom(join(STATEMACHINES_DIR, 'warranty-email')).manifest.model.id;

/** Configured memory of each step's function and of the email ingress, from the synthesized template. */
async function functionMemory(workflow: string): Promise<{ steps: Record<string, number>; ingressMb: number }> {
  const app = await synthProject(ENV);
  const machine = app.stateMachines.find((m) => m.workflowName === workflow)!;
  const resources = Object.values(app.templates[machine.stack]!.Resources ?? {}).filter((r) => r.Type === 'AWS::Lambda::Function');
  const env = (r: (typeof resources)[number]) => ((r.Properties?.Environment as { Variables?: Record<string, unknown> })?.Variables ?? {});
  const memory = (r: (typeof resources)[number]) => Number(r.Properties?.MemorySize ?? 128);
  const steps = Object.fromEntries(resources.filter((r) => typeof env(r).STEP === 'string').map((r) => [String(env(r).STEP), memory(r)]));
  const ingress = resources.find((r) => String(r.Metadata?.['stepwise:entry'] ?? '').includes('triggers/email'));
  return { steps, ingressMb: ingress ? memory(ingress) : 512 };
}

async function costOf(mode: 'fast path' | 'model path', rounds: number): Promise<{ perFlow: Record<string, ExecutionCounts>; largestPrefixTokens: number }> {
  const prices = loadPrices();
  const minCache = prices.models[COST_MODEL_ID]?.minCacheTokens ?? 4096;
  const def = loadWorkflowFrom(join(STATEMACHINES_DIR, 'warranty-email'));
  const model = estimatingModel(OfflineModel.forWorkflow(def), minCache);
  const memory = await functionMemory('warranty-email');
  const session = await WorkflowSession.start({
    workflow: 'warranty-email',
    env: ENV,
    model: 'offline',
    logLevel: 'SILENT',
    historyDir: false,
    services: { model },
    ...(mode === 'model path' && { localEnv: { FAST_PATHS: 'off' } }),
  });
  const perFlow: Record<string, ExecutionCounts[]> = {};
  try {
    const ingestEmail = emailIngestor(session);
    const run = runtimeOrchestration(session);
    let n = 0;
    for (let r = 0; r < rounds + 1; r++)
      for (const flow of FLOW_SAMPLES) {
        const dynamo = countDynamoRequests();
        try {
          const ingested = await timed(() => ingestEmail(flowSample(def.dir, flow), `cost-${mode.replace(' ', '-')}-${n++}`));
          const { input, name } = ingested.value;
          const execution = await session.runtime.startExecution(def.manifest.name, input, { name });
          if (r === 0) continue; // warm-up round: module loading is not what an execution costs
          const steps = stepTrail(execution.history).flatMap((s) => (s.output ? [s.output as StepOutput] : []));
          const usage = executionUsage(steps.map((s) => ({ usage: s.usage }) as never));
          const counts: ExecutionCounts = {
            stateTransitions: stateTransitions(execution.history),
            lambdaInvocations: steps.length + 1,
            lambdaGbSeconds: gbSeconds(memory.ingressMb, ingested.ms) + steps.reduce((sum, s) => sum + gbSeconds(memory.steps[s.step] ?? 512, s.durationMs), 0),
            dynamoReadUnits: dynamo.reads,
            dynamoWriteUnits: dynamo.writes,
            ...usage,
          };
          (perFlow[flow] ??= []).push(counts);
        } finally {
          dynamo.stop();
        }
      }
  } finally {
    await session.close();
  }
  return { perFlow: Object.fromEntries(Object.entries(perFlow).map(([f, all]) => [f, meanCounts(all)])), largestPrefixTokens: model.largestPrefixTokens };
}

async function cost(bench: BenchRun): Promise<void> {
  const rounds = Math.max(1, Math.round(Number(process.env.BENCH_ROUNDS ?? 20) / 5));
  const prices = loadPrices();
  const modes = {} as Record<'fastPath' | 'modelPath', unknown>;
  let cachedShare = 0;
  let largestPrefix = 0;
  for (const [key, mode] of [['fastPath', 'fast path'], ['modelPath', 'model path']] as const) {
    const measured = await costOf(mode, rounds);
    const counts = meanCounts(Object.values(measured.perFlow));
    const perFlowCost = Object.fromEntries(Object.entries(measured.perFlow).map(([f, c]) => [f, { counts: c, costPer1000: costPer1000(c, prices, COST_MODEL_ID) }]));
    const input = counts.inputTokens + counts.cacheReadInputTokens + counts.cacheWriteInputTokens;
    if (key === 'fastPath') {
      cachedShare = input ? counts.cacheReadInputTokens / input : 0;
      largestPrefix = measured.largestPrefixTokens;
    }
    modes[key] = { meanCounts: counts, costPer1000: costPer1000(counts, prices, COST_MODEL_ID), flows: perFlowCost };
    process.stderr.write(`  ✓ cost.${key} (${rounds} rounds of ${FLOW_SAMPLES.length} flows)\n`);
  }
  const minCache = prices.models[COST_MODEL_ID]?.minCacheTokens ?? 0;
  // The legacy mode's static prefix, as it would be sent: the whole instruction set and every tool.
  const plugin = await loadPlugin('warranty-email');
  const legacy = monolithicStep(plugin.def);
  const legacyPrefixTokens = Math.ceil(
    JSON.stringify([{ tools: [...toolSpecs(legacy.tools.map((t) => plugin.tools[t]!)), routeToolSpec(legacy)].map((toolSpec) => ({ toolSpec })) }, systemPrompt(legacy).filter((b) => !('cachePoint' in b))]).length / 4,
  );
  bench.figures.cost = {
    modelId: COST_MODEL_ID,
    prices: { file: 'evals/prices.json', checked: prices.checked, region: prices.region },
    workload: `mean over the ${FLOW_SAMPLES.length} flow samples, each an execution of the local runtime with its ingress; tokens estimated at 4 characters per token (the offline stand-in reports none); Lambda GB-seconds from the handlers' measured time, which with the offline model contains no model latency`,
    ...modes,
    monolithic: {
      promptPrefixTokensPerCall: legacyPrefixTokens,
      note: 'the legacy mode resends this prefix with every call of its tool loop (one per tool round trip: 4 for a valid warranty); run `stepwise eval warranty-email --mode ab --model bedrock` for its pass rate and measured usage',
    },
    caching: {
      minCacheTokens: minCache,
      largestCacheablePrefixTokens: largestPrefix,
      cachedShareOfInputTokens: cachedShare,
      why: largestPrefix < minCache ? `no step's static prefix (tools + system prompt, at most ${largestPrefix} tokens) reaches the ${minCache}-token minimum: Bedrock caches nothing` : 'prefixes reach the minimum',
    },
  };
  const fast = (modes.fastPath as { costPer1000: { total: number } }).costPer1000.total;
  const slow = (modes.modelPath as { costPer1000: { total: number } }).costPer1000.total;
  bench.target('cost.fastPathOverModelPath', 'cost per 1,000 executions with the fast path / with the model deciding step 01 (≤ 1: the fast path pays for itself)', fast / slow, { max: 1 });
}

// ---------------------------------------------------------------------------------------------
// 8. Lambda bundles: minified size and module initialisation per entry of the app

async function bundles(bench: BenchRun): Promise<void> {
  const app = await synthProject(ENV);
  const { sdkTraces, bundleAwsSdk } = exampleEnv(ENV);
  // One bundle per entry and workflow folder: the functions of one workflow's steps share it.
  const builds = new Map<string, LambdaBuild>();
  for (const t of Object.values(app.templates))
    for (const r of Object.values(t.Resources ?? {})) {
      const entry = r.Metadata?.[ENTRY_METADATA];
      if (r.Type !== 'AWS::Lambda::Function' || typeof entry !== 'string') continue;
      const workflowDir = r.Metadata?.[WORKFLOW_DIR_METADATA] as string | undefined;
      builds.set(`${entry} ${workflowDir ?? ''}`, { entry, sdkTraces, bundleAwsSdk, ...(workflowDir && { workflowDir }) });
    }
  const figures = await measureBundles([...builds.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([, b]) => b));
  const show = (f: BundleFigure) =>
    `${f.entry}${f.workflowDir ? ` (${f.workflowDir})` : ''}${f.sdkTraces ? ', sdkTraces' : ''}${f.bundleAwsSdk ? ', bundleAwsSdk' : ''}: ${f.minifiedKB} KB, init ${f.initMs} ms`;
  for (const f of figures) process.stderr.write(`  ✓ bundle ${show(f)}\n`);
  // What the environment options trade: the largest bundle again with the X-Ray SDK, then with the AWS SDK inside.
  const largest = figures.reduce((a, b) => (b.minifiedKB > a.minifiedKB ? b : a));
  const options = await measureBundles([
    { ...largest, sdkTraces: !sdkTraces },
    { ...largest, bundleAwsSdk: !bundleAwsSdk },
  ]);
  for (const f of options) process.stderr.write(`  ✓ bundle ${show(f)}\n`);
  bench.figures.bundles = { sdkTraces, bundleAwsSdk, builds: figures, largestWithOtherOptions: options };
  bench.target('bundles.largestMinifiedKB', `the largest Lambda bundle, minified, KB (every bundle ≤ 300 KB; the ${ENV} config: sdkTraces ${sdkTraces}, bundleAwsSdk ${bundleAwsSdk})`, largest.minifiedKB, { max: 300 });
}

// ---------------------------------------------------------------------------------------------
// 9. The ingress MIME budget: what refusing a MIME bomb costs, against parsing a large legitimate mail

/** Heap used right after one call of `fn`, garbage included, over a collected heap (MB): an upper bound on what the call needs. */
async function heapGrowthMB(fn: () => Promise<void>): Promise<number> {
  globalThis.gc?.();
  const before = process.memoryUsage().heapUsed;
  await fn();
  return (process.memoryUsage().heapUsed - before) / (1024 * 1024);
}

async function ingressBudget(bench: BenchRun): Promise<void> {
  const MiB = 1024 * 1024;
  // Raw bytes, as the ingress gets them from S3.
  const bytes = (raw: string) => new TextEncoder().encode(raw);
  const refusals: Record<string, { meanMs: number; heapGrowthMB: number }> = {};
  for (const [kind, make] of Object.entries(MIME_BOMBS)) {
    const bomb = bytes(make(10 * MiB - 64 * 1024));
    const refuse = async () => {
      const result = await parseInbound(bomb, DEFAULT_POLICY);
      if (!isRejection(result) || result.rejected !== 'mime_budget') throw new Error(`10 MiB of ${kind} was not refused as mime_budget`);
    };
    const timed = await bench.repeated({
      name: `ingress.refuse.${kind.replace(/ /g, '-')}`,
      description: `parseInbound of 10 MiB of ${kind} (${bomb.length} bytes): refused as mime_budget before parsing`,
      warmupIterations: 3,
      iterations: 30,
      unit: 'mails',
      fn: refuse,
    });
    refusals[kind] = { meanMs: timed?.meanMs ?? NaN, heapGrowthMB: await heapGrowthMB(refuse) };
  }
  const legitimate = bytes(largeAttachment(10 * MiB - 64 * 1024));
  const parsed = await bench.repeated({
    name: 'ingress.parse.largeAttachment',
    description: `parseInbound of a legitimate 10 MiB mail (${legitimate.length} bytes, a base64 attachment in 76-character lines): within the budget, parsed`,
    warmupIterations: 1,
    iterations: 5,
    unit: 'mails',
    fn: async () => {
      if (isRejection(await parseInbound(legitimate, DEFAULT_POLICY))) throw new Error('the legitimate mail was refused');
    },
  });
  // The costliest mail the budget lets through: a text body of one-character lines, just under the line limit.
  const edge = bytes(MIME_BOMBS['short lines']!(3 * (DEFAULT_POLICY.maxMimeLines - 20)));
  const parseEdge = async () => {
    if (isRejection(await parseInbound(edge, DEFAULT_POLICY))) throw new Error('the mail at the line limit was refused');
  };
  const atLimit = await bench.repeated({
    name: 'ingress.parse.lineLimit',
    description: `parseInbound of a text body of one-character lines just under the ${DEFAULT_POLICY.maxMimeLines}-line limit (${edge.length} bytes): the slowest mail the budget parses`,
    warmupIterations: 1,
    iterations: 5,
    unit: 'mails',
    fn: parseEdge,
  });
  bench.figures.ingressBudget = {
    refusals,
    largeAttachmentMs: parsed?.meanMs ?? null,
    lineLimit: { meanMs: atLimit?.meanMs ?? null, heapGrowthMB: await heapGrowthMB(parseEdge) },
    policy: { maxMimeLines: DEFAULT_POLICY.maxMimeLines, maxMimeParts: DEFAULT_POLICY.maxMimeParts },
  };
  const slowest = Math.max(...Object.values(refusals).map((r) => r.meanMs));
  const largest = Math.max(...Object.values(refusals).map((r) => r.heapGrowthMB));
  bench.target('ingress.refuseBombMs', `the slowest refusal of a 10 MiB MIME bomb (${Object.keys(MIME_BOMBS).join(', ')}), mean ms`, Number.isNaN(slowest) ? null : slowest, { max: 100 });
  bench.target('ingress.refuseBombHeapMB', `heap used by one refusal of a 10 MiB MIME bomb, garbage included, MB (the worst of ${Object.keys(MIME_BOMBS).length})`, gcExposed ? largest : null, { max: 64 });
}

// ---------------------------------------------------------------------------------------------

/** In this order: the synth group must come before anything else synthesizes. */
const GROUPS: Group[] = [
  { name: 'workflow', run: workflowLoading },
  { name: 'synth', run: synth },
  { name: 'lifecycle-core', run: lifecycleCore },
  { name: 'eventbridge', run: eventBridge },
  { name: 'lifecycle-session', run: lifecycleSession },
  { name: 'lifecycle-throughput', run: leadThroughput },
  { name: 'warranty-session', run: warrantySession },
  { name: 'orchestration', run: orchestration },
  { name: 'cost', run: cost },
  { name: 'bundles', run: bundles },
  { name: 'startup', run: startup },
  { name: 'ingress-budget', run: ingressBudget },
  { name: 'studio', run: studioOpen },
];

async function main(): Promise<number> {
  // The SDK's multi-line Node 20 warning on every client would bury the progress lines.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  const args = process.argv.slice(2);
  const json = args.includes('--json');
  const markdown = args.includes('--markdown');
  const filter = args.filter((a) => a !== '--json' && a !== '--markdown');
  const groups = filter.length ? GROUPS.filter((g) => filter.some((word) => g.name.includes(word))) : GROUPS;
  if (!groups.length) {
    process.stderr.write(`bench: no group matches ${filter.join(' ')} (groups: ${GROUPS.map((g) => g.name).join(', ')})\n`);
    return 2;
  }
  if (!gcExposed) process.stderr.write('bench: run with --expose-gc (npm run bench does) for heap deltas without uncollected garbage\n');

  const bench = new BenchRun();
  const started = performance.now();
  for (const group of groups) {
    process.stderr.write(`${group.name}\n`);
    try {
      await group.run(bench);
    } catch (e) {
      bench.fail(group.name, e);
    }
  }
  const document = bench.writeJson(RESULTS_FILE, filter);
  if (json || markdown) {
    process.stdout.write(json ? `${JSON.stringify(document, null, 2)}\n` : benchMarkdown(document));
    return bench.failures.length ? 1 : 0;
  }

  process.stdout.write(`\n${bench.table()}\n\n`);
  for (const f of bench.failures) process.stdout.write(`FAILED ${f.name}: ${f.error}\n`);
  process.stdout.write(`${bench.results.length} cases in ${((performance.now() - started) / 1000).toFixed(1)} s → ${RESULTS_FILE}\n`);
  return bench.failures.length ? 1 : 0;
}

process.exitCode = await main();
