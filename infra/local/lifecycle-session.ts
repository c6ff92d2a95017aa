/**
 * The lead lifecycle running locally, deployed exactly as on AWS: the `LeadLifecycleStack`
 * template is synthesized in-process, its bus rules drive an in-process EventBridge
 * (`LocalEventBus`), its Express state machine runs in the local runtime with every Task mapped to
 * its handler module, and the event store is DynamoDB Local (or, without Java, an in-memory store
 * with the same semantics). The state machine's `events:putEvents` goes back to the local bus and
 * its `sqs:sendMessage` (dead letters) is recorded; listeners write to recording adapters.
 *
 * Used by `stepwise lead replay|show|report` and the lifecycle integration tests.
 */
import { randomUUID } from 'node:crypto';
import { DescribeTableCommand, ResourceNotFoundException } from '@aws-sdk/client-dynamodb';
import { InvalidInputError, LocalServiceError } from '../../lambdas/lib/errors.ts';
import type { AgentConfig } from '../../lambdas/lifecycle/conditions.ts';
import { toPutEventsEntry, type LeadEventSource } from '../../lambdas/lifecycle/envelope.ts';
import type { LifecycleServices } from '../../lambdas/lifecycle/handlers/services.ts';
import { loadAgentConfig, loadLifecycle } from '../../lambdas/lifecycle/loader.ts';
import { recordingCrm, recordingFollowUpScheduler, recordingNotifier } from '../../lambdas/lifecycle/ports.ts';
import { LifecycleEventSchema, type LifecycleDefinition, type LifecycleEvent } from '../../lambdas/lifecycle/schema.ts';
import { dynamoLeadStore, memoryLeadStore, type LeadStore } from '../../lambdas/lifecycle/store.ts';
import { getEnvConfig } from '../config.ts';
import { LIFECYCLE_STATES } from '../constructs/lifecycle-workflow.ts';
import { LeadLifecycleStack, leadLifecycleStackName, leadsBusName } from '../stacks/lead-lifecycle-stack.ts';
import { createTablesFromTemplate, localTableName, startDynamoDbLocal, type DynamoDbLocal } from './dynamodb-local.ts';
import { LocalEventBus, type DeadLetter, type PutEventsEntry, type PutEventsResult } from './eventbridge/bus.ts';
import { LocalRuntime, type LocalExecution } from './runtime.ts';
import { synthesize, type SynthesizedApp } from './synth.ts';
import type { CfnTemplate } from './tokens.ts';

export interface LifecycleSessionOptions {
  /** The agent config the lifecycle applies (`AGENT_CONFIG`). @default the environment's agent (`leads.agent` in infra/config.ts) */
  agentConfig?: AgentConfig;
  /** The environment whose stack is synthesized. @default 'dev' */
  env?: string;
  /**
   * `dynamodb-local`: the event store is the stack's table in DynamoDB Local (Java 17+);
   * `memory`: an in-memory store with the same semantics, for machines without Java.
   * @default 'dynamodb-local'
   */
  store?: 'dynamodb-local' | 'memory';
  /** A running emulator to create the table in and use (left running by `stop()`). @default a new one, stopped by `stop()` */
  dynamo?: DynamoDbLocal;
  /** Where executions are stored, for `stepwise history`. @default false (not stored) */
  historyDir?: string | false;
}

/** A message the state machine's `DeadLetter` Task sent (an event it could not apply). */
export interface SentDeadLetter {
  queueUrl: string;
  body: unknown;
}

/** A line of a replay file that is an event. */
export interface ReplayLine {
  line: number;
  event: LifecycleEvent;
}

/** What a JSON Lines replay file holds: its events, and every non-blank line that is not one. */
export interface ParsedReplayFile {
  events: ReplayLine[];
  malformed: { line: number; error: string }[];
  /** Non-blank lines: `events.length + malformed.length`. */
  lines: number;
}

const PUT_EVENTS_INTEGRATION = 'arn:aws:states:::events:putEvents';
const SQS_SEND_MESSAGE_INTEGRATION = 'arn:aws:states:::sqs:sendMessage';
/** PutEvents takes at most this many entries. */
const PUT_EVENTS_BATCH = 10;

/**
 * Parse a JSON Lines file of lifecycle events (`{ "id", "leadId", "type", "time", "detail"? }` per
 * line). Blank lines are skipped; any other line that is not such an event is reported with its
 * (1-based) line number, never dropped silently.
 */
export function parseReplayFile(text: string): ParsedReplayFile {
  const parsed: ParsedReplayFile = { events: [], malformed: [], lines: 0 };
  text.split(/\r?\n/).forEach((raw, i) => {
    if (!raw.trim()) return;
    parsed.lines++;
    const line = i + 1;
    try {
      let value: unknown;
      try {
        value = JSON.parse(raw);
      } catch (e) {
        throw new InvalidInputError(`not JSON: ${(e as Error).message}`);
      }
      const result = LifecycleEventSchema.safeParse(value);
      if (!result.success) {
        const issue = result.error.issues[0]!;
        throw new InvalidInputError(`${issue.path.join('.') || '(root)'}: ${issue.message}`);
      }
      // The envelope mapping has its own rules (reserved detail keys): check them now, not on the bus.
      toPutEventsEntry(result.data, 'check', 'stepwise.replay');
      parsed.events.push({ line, event: result.data });
    } catch (e) {
      parsed.malformed.push({ line, error: (e as Error).message });
    }
  });
  return parsed;
}

/** Consecutive events with the same time, in file order: each group may be sent concurrently. */
export function groupByTime<T extends { event: LifecycleEvent }>(lines: readonly T[]): T[][] {
  const groups: T[][] = [];
  for (const line of lines) {
    const last = groups.at(-1);
    if (last && Date.parse(last[0]!.event.time) === Date.parse(line.event.time)) last.push(line);
    else groups.push([line]);
  }
  return groups;
}

const synthesized = new Map<string, SynthesizedApp>();

/** The lifecycle stack of `env`, synthesized once per process. */
function synthLifecycleStack(env: string): SynthesizedApp {
  let app = synthesized.get(env);
  if (!app) {
    const config = getEnvConfig(env);
    app = synthesize((a) => new LeadLifecycleStack(a, leadLifecycleStackName(config), { config }), { env });
    synthesized.set(env, app);
  }
  return app;
}

/** The listeners' local adapters: they record what they were asked to do. */
interface RecordingAdapters {
  crm: ReturnType<typeof recordingCrm>;
  notifier: ReturnType<typeof recordingNotifier>;
  followUps: ReturnType<typeof recordingFollowUpScheduler>;
}

interface SessionParts {
  runtime: LocalRuntime;
  bus: LocalEventBus;
  store: LeadStore;
  tableName: string | undefined;
  busName: string;
  adapters: RecordingAdapters;
  executions: LocalExecution[];
  sentDeadLetters: SentDeadLetter[];
  ownedDynamo: DynamoDbLocal | undefined;
}

/** A PutEvents entry as the `events:putEvents` integration gets it: `Detail` may be JSON, which Step Functions serializes. */
type IntegrationEntry = Omit<PutEventsEntry, 'Detail'> & { Detail?: unknown };

/** The `events:putEvents` integration on the local bus: a failed entry fails the Task (`EventBridge.FailedEntry`). */
async function putFromStateMachine(bus: LocalEventBus, entries: IntegrationEntry[]): Promise<PutEventsResult> {
  const result = await bus.putEvents(entries.map((e) => ({ ...e, Detail: typeof e.Detail === 'string' ? e.Detail : JSON.stringify(e.Detail) })));
  const failed = result.Entries.find((e) => e.ErrorCode);
  if (failed) throw Object.assign(new Error(`${failed.ErrorCode}: ${failed.ErrorMessage}`), { name: 'EventBridge.FailedEntry' });
  return result;
}

/**
 * A running local lifecycle. Always `stop()` it.
 *
 * @example
 * const session = await LifecycleSession.start({ agentConfig: loadAgentConfig('attend-meeting') });
 * try {
 *   await session.replay(parseReplayFile(text).events);
 *   console.log(await session.store.getLead('lead-1'));
 * } finally {
 *   await session.stop();
 * }
 */
export class LifecycleSession {
  readonly definition: LifecycleDefinition = loadLifecycle();
  readonly runtime: LocalRuntime;
  readonly bus: LocalEventBus;
  /** The leads bus name the stack gives its rules. */
  readonly busName: string;
  /** The event store the state machine's Tasks write (read it for results). */
  readonly store: LeadStore;
  /** The store's table in DynamoDB Local (what `--table` names on AWS); undefined for the in-memory store. */
  readonly tableName: string | undefined;
  /** What the listeners sent. */
  readonly crm: RecordingAdapters['crm'];
  readonly notifier: RecordingAdapters['notifier'];
  readonly followUps: RecordingAdapters['followUps'];
  /** Every lifecycle execution, in the order they finished. */
  readonly executions: LocalExecution[];
  /** Events the state machine could not apply (its `DeadLetter` Task's messages). */
  readonly sentDeadLetters: SentDeadLetter[];
  private readonly ownedDynamo: DynamoDbLocal | undefined;

  private constructor(parts: SessionParts) {
    this.runtime = parts.runtime;
    this.bus = parts.bus;
    this.store = parts.store;
    this.tableName = parts.tableName;
    this.busName = parts.busName;
    this.crm = parts.adapters.crm;
    this.notifier = parts.adapters.notifier;
    this.followUps = parts.adapters.followUps;
    this.executions = parts.executions;
    this.sentDeadLetters = parts.sentDeadLetters;
    this.ownedDynamo = parts.ownedDynamo;
  }

  /**
   * Synthesize the stack (once per process), prepare the store and wire the bus, the runtime and the adapters.
   * @throws JavaNotFoundError when the store is `dynamodb-local` and Java 17+ is missing.
   */
  static async start(options: LifecycleSessionOptions = {}): Promise<LifecycleSession> {
    const env = options.env ?? 'dev';
    const config = getEnvConfig(env);
    const app = synthLifecycleStack(env);
    const template = app.templates[leadLifecycleStackName(config)]!;
    const agentConfig = options.agentConfig ?? loadAgentConfig(config.leads.agent);

    const memory = options.store === 'memory';
    const ownedDynamo = memory || options.dynamo ? undefined : await startDynamoDbLocal();
    const dynamo = memory ? undefined : (options.dynamo ?? ownedDynamo);
    const tableName = dynamo && tableNameOf(template);
    let store: LeadStore;
    try {
      store = dynamo ? await prepareTable(dynamo, template, tableName!) : memoryLeadStore();
    } catch (e) {
      await ownedDynamo?.stop();
      throw e;
    }

    const adapters = { crm: recordingCrm(), notifier: recordingNotifier(), followUps: recordingFollowUpScheduler() };
    const executions: LocalExecution[] = [];
    const sentDeadLetters: SentDeadLetter[] = [];
    // The runtime publishes to the bus and the bus delivers to the runtime; no execution starts before both exist.
    let bus: LocalEventBus | undefined;
    const runtime = await LocalRuntime.create({
      app,
      services: { ...(memory && { store }), ...adapters } satisfies LifecycleServices,
      historyDir: options.historyDir ?? false,
      ...(dynamo && { dynamo: { endpoint: dynamo.endpoint } }),
      extraEnv: { AGENT_CONFIG: JSON.stringify(agentConfig) },
      serviceIntegrations: {
        [PUT_EVENTS_INTEGRATION]: (input: { Entries: IntegrationEntry[] }) => putFromStateMachine(bus!, input.Entries),
        [SQS_SEND_MESSAGE_INTEGRATION]: (input: { QueueUrl: string; MessageBody: unknown }) => {
          sentDeadLetters.push({ queueUrl: input.QueueUrl, body: input.MessageBody });
          return { MessageId: randomUUID() };
        },
      },
    });
    bus = new LocalEventBus(template, {
      // The state machine runs to its end (it dead-letters its own failures); listeners are invoked like Lambda.
      deliver: async (arn, input) => {
        const service = arn.split(':')[2];
        if (service === 'states') executions.push(await runtime.startExecution(arn, input));
        else if (service === 'lambda') await runtime.invokeFunction(arn, input);
        else throw new LocalServiceError(`the local lifecycle cannot deliver to ${arn}`);
      },
    });
    return new LifecycleSession({ runtime, bus, store, tableName, busName: leadsBusName(config), adapters, executions, sentDeadLetters, ownedDynamo });
  }

  /**
   * Put lifecycle events on the leads bus (in PutEvents batches of 10) and return once the bus
   * accepted them; deliveries run in the background (`drain()` waits for them).
   * @throws LocalServiceError when the bus refuses an entry.
   */
  async put(events: readonly LifecycleEvent[], source: LeadEventSource = 'stepwise.replay'): Promise<void> {
    for (let i = 0; i < events.length; i += PUT_EVENTS_BATCH) {
      const batch = events.slice(i, i + PUT_EVENTS_BATCH);
      const result = await this.bus.putEvents(batch.map((e) => toPutEventsEntry(e, this.busName, source)));
      const failed = result.Entries.findIndex((e) => e.ErrorCode);
      if (failed >= 0) throw new LocalServiceError(`the local bus refused event ${batch[failed]!.id}: ${result.Entries[failed]!.ErrorMessage}`);
    }
  }

  /** Wait until every delivery (state machine executions, listeners, and what they publish) is done. */
  drain(): Promise<void> {
    return this.bus.drain();
  }

  /**
   * Put events in order: each group of consecutive events with the same time is put at once (its
   * events are applied concurrently, in any order), and fully processed before the next group.
   */
  async replay(lines: readonly ReplayLine[], source: LeadEventSource = 'stepwise.replay'): Promise<void> {
    for (const group of groupByTime(lines)) {
      await this.put(
        group.map((l) => l.event),
        source,
      );
      await this.drain();
    }
  }

  /** Listener deliveries that failed every attempt (the bus's dead letters). */
  get listenerDeadLetters(): readonly DeadLetter[] {
    return this.bus.deadLetters;
  }

  /** How many executions found their event already in the log (redeliveries): nothing was applied for them. */
  get duplicates(): number {
    return this.executions.filter((e) => e.events.some((h) => h.stateEnteredEventDetails?.name === LIFECYCLE_STATES.duplicate)).length;
  }

  /** Executions that did not succeed. */
  get failedExecutions(): LocalExecution[] {
    return this.executions.filter((e) => e.status !== 'SUCCEEDED');
  }

  /** Wait for pending deliveries, then stop the emulator this session started (its data is gone). */
  async stop(): Promise<void> {
    try {
      await this.drain();
    } finally {
      await this.ownedDynamo?.stop();
    }
  }
}

/** The local name of the stack's (only) table. */
function tableNameOf(template: CfnTemplate): string {
  const [tableId, table] = Object.entries(template.Resources ?? {}).find(([, r]) => r.Type === 'AWS::DynamoDB::Table')!;
  return localTableName(tableId, table);
}

/** The stack's table in the emulator (created unless a session on the same emulator already did), as the store. */
async function prepareTable(dynamo: DynamoDbLocal, template: CfnTemplate, tableName: string): Promise<LeadStore> {
  if (!(await tableExists(dynamo, tableName))) await createTablesFromTemplate(dynamo.client, template);
  return dynamoLeadStore(dynamo.client, tableName);
}

async function tableExists(dynamo: DynamoDbLocal, TableName: string): Promise<boolean> {
  try {
    await dynamo.client.send(new DescribeTableCommand({ TableName }));
    return true;
  } catch (e) {
    if (e instanceof ResourceNotFoundException) return false;
    throw e;
  }
}
