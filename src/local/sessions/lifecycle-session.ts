/**
 * A lifecycle running locally, deployed exactly as on AWS: its `LifecycleStack` template is
 * synthesized in-process, its bus rules drive an in-process EventBridge (`LocalEventBus`), its
 * Express state machine runs in the local runtime with every Task mapped to its handler module,
 * and the event store is DynamoDB Local (or, without Java, an in-memory store with the same
 * semantics). The state machine's `sqs:sendMessage` (dead letters) and what rules send to a queue
 * (events from unknown sources) are recorded; the outbox pipe (src/local/cloud/outbox-pipe.ts)
 * publishes committed changes from the table's stream to the bus; timers run on the emulated
 * EventBridge Scheduler (src/local/cloud/scheduler.ts), whose clock moves only when told
 * (`advanceClock`, `replay(..., { clock: true })`); listeners write to recording adapters.
 *
 * Used by `stepwise lifecycle <name> replay|show|report` and the lifecycle integration tests.
 */
import { randomUUID } from 'node:crypto';
import type { App } from 'aws-cdk-lib';
import { LIFECYCLE_STATES, lifecycleBusName, lifecycleStackName } from '../../cdk/names.ts';
import { causeMessage, LocalServiceError } from '../../core/errors.ts';
import type { AgentConfig } from '../../definitions/lifecycle/agent-config.ts';
import { loadAgentConfig, loadLifecycle, NO_AGENT } from '../../definitions/lifecycle/loader.ts';
import type { LifecycleDefinition, LifecycleEvent } from '../../definitions/lifecycle/schema.ts';
import { REPLAY_SOURCE } from '../../definitions/lifecycle/schema.ts';
import type { EnvConfig } from '../../project/config.ts';
import { projectEnvironment } from '../../project/project.ts';
import { toPutEventsEntry } from '../../runtime/lifecycle/envelope.ts';
import type { LifecycleServices } from '../../runtime/lifecycle/handlers/services.ts';
import { recordingCrm, recordingFollowUpChannel, recordingNotifier } from '../../runtime/lifecycle/ports.ts';
import type { LifecycleStore } from '../../runtime/lifecycle/store.ts';
import type { TimerRequest } from '../../runtime/lifecycle/timers.ts';
import { type LocalExecution, LocalRuntime } from '../asl/runtime.ts';
import type { DynamoDbLocal } from '../cloud/dynamodb-local.ts';
import {
  type DeadLetter,
  type Deliver,
  type EventEnvelope,
  entrySize,
  LocalEventBus,
  MAX_PUT_EVENTS_BYTES,
  type PutEventsEntry,
  type PutEventsResult,
} from '../cloud/eventbridge/bus.ts';
import type { CfnTemplate } from '../cloud/intrinsics.ts';
import { LocalPipe } from '../cloud/outbox-pipe.ts';
import { LocalScheduler } from '../cloud/scheduler.ts';
import { type SynthesizedApp, synthesize, synthesizeCached, withTablePrefix } from '../cloud/synth.ts';
import { type EventStore, openEventStore } from './lifecycle-event-store.ts';
import { type ClockLine, groupByTime, type ReplayLine } from './lifecycle-replay-file.ts';

export {
  type ClockLine,
  groupByTime,
  type ParsedReplayFile,
  parseReplayFile,
  type ReplayLine,
} from './lifecycle-replay-file.ts';

export interface LifecycleSessionOptions {
  /** The lifecycle: the folder of its `statechart.yaml` under `statemachines/`. */
  lifecycle: string;
  /** The folder holding the lifecycle's folder (the handlers load it from there too). @default the project's `statemachines/` */
  root?: string;
  /**
   * The agent config the lifecycle applies (`AGENT_CONFIG`). @default the environment's agent
   * (`lifecycles.<name>.agent` in stepwise.config.ts), else none
   */
  agentConfig?: AgentConfig;
  /** The environment whose stack is synthesized. @default 'dev' */
  env?: string;
  /**
   * `dynamodb-local`: the event store is the stack's table in DynamoDB Local (Java 17+);
   * `memory`: an in-memory store with the same semantics, for machines without Java.
   * @default 'dynamodb-local'
   */
  store?: 'dynamodb-local' | 'memory';
  /**
   * A running emulator to create the table in and use (left running by `stop()`). @default a new one, stopped by
   * `stop()`
   */
  dynamo?: DynamoDbLocal;
  /** Where executions are stored, for `stepwise history`. @default false (not stored) */
  historyDir?: string | false;
}

/** A message the state machine's `Dead letter` Task sent (an event it could not apply, with the reason). */
export interface SentDeadLetter {
  queueUrl: string;
  body: unknown;
}

/** An event a rule sent to a queue (the events from sources the lifecycle does not apply). */
export interface QueuedEvent {
  queueArn: string;
  ruleLogicalId: string;
  event: EventEnvelope;
}

const SQS_SEND_MESSAGE_INTEGRATION = 'arn:aws:states:::sqs:sendMessage';
/** PutEvents takes at most this many entries. */
const PUT_EVENTS_BATCH = 10;

const synthesized = new Map<string, Promise<SynthesizedApp>>();

/**
 * The stack of one lifecycle in `config`'s environment, synthesized once per process and, for a lifecycle of the
 * project (`fromProject`), kept between processes while the project is unchanged: a local replay then never loads
 * the CDK.
 */
function synthLifecycleStack(
  def: LifecycleDefinition,
  config: EnvConfig,
  fromProject: boolean,
): Promise<SynthesizedApp> {
  const key = `${config.name}.lifecycle-${def.name}`;
  let app = synthesized.get(key);
  if (!app) {
    const options = { env: config.name };
    const build = async () => {
      const { LifecycleStack } = await import('../../cdk/stacks/lifecycle-stack.ts');
      return (a: App) =>
        void new LifecycleStack(a, lifecycleStackName(def.name, config.name), { config, lifecycle: def });
    };
    app = fromProject ? synthesizeCached(key, options, build) : build().then((b) => synthesize(b, options));
    synthesized.set(key, app);
    app.catch(() => synthesized.delete(key));
  }
  return app;
}

/** The listeners' local adapters: they record what they were asked to do. */
interface RecordingAdapters {
  crm: ReturnType<typeof recordingCrm>;
  notifier: ReturnType<typeof recordingNotifier>;
  followUpChannel: ReturnType<typeof recordingFollowUpChannel>;
}

/** What a session records as it runs. */
interface Recordings {
  adapters: RecordingAdapters;
  executions: LocalExecution[];
  sentDeadLetters: SentDeadLetter[];
  queuedEvents: QueuedEvent[];
}

/** The lifecycle, its stack synthesized for one environment, and the agent config it applies. */
interface SynthesizedLifecycle {
  definition: LifecycleDefinition;
  app: SynthesizedApp;
  template: CfnTemplate;
  busName: string;
  agentConfig: AgentConfig;
  root: string | undefined;
}

/** What runs the lifecycle, as the stack wires it on AWS. */
interface Wiring {
  runtime: LocalRuntime;
  bus: LocalEventBus;
  scheduler: LocalScheduler;
  pipe: LocalPipe;
}

interface SessionParts {
  lifecycle: SynthesizedLifecycle;
  events: EventStore;
  recorded: Recordings;
  wiring: Wiring;
}

/** Options of {@link LifecycleSession.replay}. */
export interface ReplayOptions {
  /** @default stepwise.replay */
  source?: string;
  /**
   * Drive the emulated scheduler: before each group of events the clock moves to their time
   * (firing every timer due at or before it first), clock lines move it explicitly, and at the end
   * it moves to `until` when given. Without it timers are set but never fire.
   */
  clock?: boolean;
  /** With `clock`: where the clock ends (ISO time). @default the last line's time */
  until?: string;
}

/**
 * A running local lifecycle. Always `stop()` it.
 *
 * @example
 * const session = await LifecycleSession.start({ lifecycle: 'order-lifecycle' });
 * try {
 *   await session.replay(parseReplayFile(text, session.definition).events);
 *   console.log(await session.store.getEntity('order-1'));
 * } finally {
 *   await session.stop();
 * }
 */
export class LifecycleSession {
  readonly definition: LifecycleDefinition;
  readonly runtime: LocalRuntime;
  readonly bus: LocalEventBus;
  /** The bus name the stack gives its rules. */
  readonly busName: string;
  /** The event store the state machine's Tasks write (read it for results). */
  readonly store: LifecycleStore;
  /** The store's table in DynamoDB Local (what `--table` names on AWS); undefined for the in-memory store. */
  readonly tableName: string | undefined;
  /** What the listeners sent. */
  readonly crm: RecordingAdapters['crm'];
  readonly notifier: RecordingAdapters['notifier'];
  /** Follow-ups the follow-up sender sent through the agent's channel. */
  readonly followUpChannel: RecordingAdapters['followUpChannel'];
  /** The emulated EventBridge Scheduler holding the entity timers; its clock moves only with `advanceClock`. */
  readonly scheduler: LocalScheduler;
  /** The outbox pipe from the table's stream to the bus. */
  readonly pipe: LocalPipe;
  /** Every lifecycle execution, in the order they finished. */
  readonly executions: LocalExecution[];
  /** Events the state machine could not apply (its `Dead letter` Task's messages). */
  readonly sentDeadLetters: SentDeadLetter[];
  /** Events from sources the lifecycle does not apply, as its catch-all rule queued them. */
  readonly queuedEvents: QueuedEvent[];
  private readonly ownedDynamo: DynamoDbLocal | undefined;

  private constructor({ lifecycle, events, recorded, wiring }: SessionParts) {
    this.definition = lifecycle.definition;
    this.busName = lifecycle.busName;
    this.store = events.store;
    this.tableName = events.tableName;
    this.ownedDynamo = events.ownedDynamo;
    this.crm = recorded.adapters.crm;
    this.notifier = recorded.adapters.notifier;
    this.followUpChannel = recorded.adapters.followUpChannel;
    this.executions = recorded.executions;
    this.sentDeadLetters = recorded.sentDeadLetters;
    this.queuedEvents = recorded.queuedEvents;
    this.runtime = wiring.runtime;
    this.bus = wiring.bus;
    this.scheduler = wiring.scheduler;
    this.pipe = wiring.pipe;
  }

  /**
   * Synthesize the stack (once per process), prepare the store and wire the bus, the runtime and the adapters.
   * @throws JavaNotFoundError when the store is `dynamodb-local` and Java 17+ is missing.
   */
  static async start(options: LifecycleSessionOptions): Promise<LifecycleSession> {
    const lifecycle = await synthesizeLifecycle(options);
    const events = await openEventStore(options, lifecycle.template);
    const recorded: Recordings = {
      adapters: { crm: recordingCrm(), notifier: recordingNotifier(), followUpChannel: recordingFollowUpChannel() },
      executions: [],
      sentDeadLetters: [],
      queuedEvents: [],
    };
    const wiring = await wire(lifecycle, events, recorded, options.historyDir ?? false);
    return new LifecycleSession({ lifecycle, events, recorded, wiring });
  }

  /**
   * Put lifecycle events on the lifecycle's bus, in PutEvents requests of at most 10 entries and
   * 256 KiB (as a producer must), and return once the bus accepted them; deliveries run in the
   * background (`drain()` waits for them).
   * @throws LocalServiceError when the bus refuses an entry or a request (an event over 256 KiB alone).
   */
  async put(events: readonly LifecycleEvent[], source: string = REPLAY_SOURCE): Promise<void> {
    const entries = events.map((e) => toPutEventsEntry(this.definition, e, this.busName, source));
    let batch: number[] = [];
    let bytes = 0;
    const send = async () => {
      if (!batch.length) return;
      const sent = batch;
      batch = [];
      bytes = 0;
      let result: PutEventsResult;
      try {
        result = await this.bus.putEvents(sent.map((i) => entries[i]!));
      } catch (e) {
        throw new LocalServiceError(`the local bus refused event ${events[sent[0]!]!.id}: ${(e as Error).message}`, {
          cause: e,
        });
      }
      const failed = result.Entries.findIndex((e) => e.ErrorCode);
      if (failed >= 0)
        throw new LocalServiceError(
          `the local bus refused event ${events[sent[failed]!]!.id}: ${result.Entries[failed]!.ErrorMessage}`,
        );
    };
    for (const [i, entry] of entries.entries()) {
      const size = entrySize(entry);
      if (batch.length === PUT_EVENTS_BATCH || bytes + size >= MAX_PUT_EVENTS_BYTES) await send();
      batch.push(i);
      bytes += size;
    }
    await send();
  }

  /**
   * Wait until every delivery is done: state machine executions, what the outbox pipe publishes
   * from the stream, listeners, and what they publish in turn.
   */
  async drain(): Promise<void> {
    for (;;) {
      await this.bus.drain();
      if ((await this.pipe.pump()) === 0) return;
    }
  }

  /** Move the emulated clock to `time`, firing (and fully processing) every timer due on the way. */
  async advanceClock(time: string | number): Promise<void> {
    await this.drain();
    await this.scheduler.advanceTo(time, () => this.drain());
  }

  /**
   * Put events in order: each group of consecutive events with the same time is put at once (its
   * events are applied concurrently, in any order), and fully processed before the next group.
   * Clock lines only count with `clock` (see {@link ReplayOptions}).
   */
  async replay(lines: readonly (ReplayLine | ClockLine)[], options: ReplayOptions = {}): Promise<void> {
    const { source = REPLAY_SOURCE, clock = false, until } = options;
    const steps: (ReplayLine[] | ClockLine)[] = [];
    let run: ReplayLine[] = [];
    const flush = () => {
      steps.push(...groupByTime(run));
      run = [];
    };
    for (const line of lines) {
      if (!('clock' in line)) run.push(line);
      else {
        flush();
        steps.push(line);
      }
    }
    flush();
    for (const step of steps) {
      if (!Array.isArray(step)) {
        if (clock) await this.advanceClock(step.clock);
        continue;
      }
      if (clock) await this.advanceClock(step[0]!.event.time);
      await this.put(
        step.map((l) => l.event),
        source,
      );
      await this.drain();
    }
    if (clock && until !== undefined) await this.advanceClock(until);
  }

  /** Outbox batches the pipe gave up on, and timers Scheduler could not deliver (their dead-letter queues). */
  get publishDeadLetters(): { outbox: LocalPipe['deadLetters']; timers: LocalScheduler['deadLetters'] } {
    return { outbox: this.pipe.deadLetters, timers: this.scheduler.deadLetters };
  }

  /** Listener deliveries that failed every attempt (the bus's dead letters). */
  get listenerDeadLetters(): readonly DeadLetter[] {
    return this.bus.deadLetters;
  }

  /** How many executions found their event already in the log (redeliveries): nothing was applied for them. */
  get duplicates(): number {
    return this.executions.filter((e) =>
      e.events.some((h) => h.stateEnteredEventDetails?.name === LIFECYCLE_STATES.duplicate),
    ).length;
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

/** The lifecycle of `options` and its stack in their environment, with the agent config it applies. */
async function synthesizeLifecycle(options: LifecycleSessionOptions): Promise<SynthesizedLifecycle> {
  const env = options.env ?? 'dev';
  const config = await projectEnvironment(env, { allowPlaceholders: true });
  const definition = loadLifecycle(options.lifecycle, options.root);
  const app = await synthLifecycleStack(definition, config, options.root === undefined);
  const agent = Object.hasOwn(config.lifecycles, definition.name)
    ? config.lifecycles[definition.name]!.agent
    : undefined;
  return {
    definition,
    app,
    template: app.templates[lifecycleStackName(definition.name, env)]!,
    busName: lifecycleBusName(definition.name, env),
    agentConfig: options.agentConfig ?? (agent ? loadAgentConfig(agent, definition.name) : NO_AGENT),
    root: options.root,
  };
}

/**
 * The runtime, the bus, the scheduler and the pipe, wired to each other and to what the session records. The
 * runtime publishes to the bus and the bus delivers to the runtime; no execution starts before both exist.
 */
async function wire(
  lifecycle: SynthesizedLifecycle,
  events: EventStore,
  recorded: Recordings,
  historyDir: string | false,
): Promise<Wiring> {
  let bus: LocalEventBus | undefined;
  const putOnBus = async (entries: PutEventsEntry[]) => {
    const result = await bus!.putEvents(entries);
    const failed = result.Entries.find((e) => e.ErrorCode);
    if (failed) throw new LocalServiceError(`the local bus refused an entry: ${failed.ErrorMessage}`);
    return result;
  };
  const scheduler = timerScheduler(lifecycle.busName, putOnBus);
  const runtime = await LocalRuntime.create({
    app: withTablePrefix(lifecycle.app, events.dynamo?.tablePrefix ?? ''),
    services: {
      // The handlers open the table in DynamoDB Local from their environment; the in-memory store is handed to them.
      ...(!events.dynamo && { store: events.store }),
      ...recorded.adapters,
      timers: scheduler,
      now: scheduler.now,
      putEvents: async (entries) =>
        void (await putOnBus(
          entries.map((e) => ({ ...e, EventBusName: e.EventBusName ?? lifecycle.busName })) as PutEventsEntry[],
        )),
    } satisfies LifecycleServices,
    historyDir,
    ...(events.dynamo && { dynamo: { endpoint: events.dynamo.endpoint } }),
    extraEnv: {
      AGENT_CONFIG: JSON.stringify(lifecycle.agentConfig),
      ...(lifecycle.root !== undefined && { STATEMACHINES_DIR: lifecycle.root }),
    },
    serviceIntegrations: {
      [SQS_SEND_MESSAGE_INTEGRATION]: (input: { QueueUrl: string; MessageBody: unknown }) => {
        recorded.sentDeadLetters.push({ queueUrl: input.QueueUrl, body: input.MessageBody });
        return { MessageId: randomUUID() };
      },
    },
  });
  bus = new LocalEventBus(lifecycle.template, { deliver: busTargets(runtime, recorded) });
  const pipe = LocalPipe.fromTemplate(lifecycle.template, {
    source: events.stream,
    invoke: (arn, payload) => runtime.invokeFunction(arn, payload),
    put: (entries) => bus!.putEvents(entries),
  });
  return { runtime, bus, scheduler, pipe };
}

/** What EventBridge Scheduler does when a timer is due: put its delivery on the bus, at the due time. */
function timerScheduler(
  busName: string,
  putOnBus: (entries: PutEventsEntry[]) => Promise<PutEventsResult>,
): LocalScheduler {
  return new LocalScheduler({
    deliver: async (t: TimerRequest) => {
      await putOnBus([
        {
          EventBusName: busName,
          Source: t.delivery.source,
          DetailType: t.delivery.detailType,
          Detail: JSON.stringify({ ...t.delivery.detail, timer: t.stamp }),
          Time: new Date(t.dueAt),
        },
      ]);
    },
  });
}

/**
 * How the bus delivers to its rules' targets: the state machine runs to its end (it dead-letters its own failures),
 * listeners are invoked like Lambda, and what goes to a queue is recorded.
 */
function busTargets(runtime: LocalRuntime, recorded: Recordings): Deliver {
  return async (arn, input, context) => {
    const service = arn.split(':')[2];
    if (service === 'states') recorded.executions.push(await runtime.startExecution(arn, input));
    else if (service === 'lambda') await runtime.invokeFunction(arn, input);
    else if (service === 'sqs')
      recorded.queuedEvents.push({ queueArn: arn, ruleLogicalId: context.ruleLogicalId, event: context.event });
    else throw new LocalServiceError(`the local lifecycle cannot deliver to ${arn}`);
  };
}

/**
 * Something the replay could not do: an event that was not applied (the state machine
 * dead-lettered it with its reason, or the execution failed without a dead letter), an event from
 * a source the lifecycle does not apply (its catch-all rule queued it), or a listener delivery,
 * outbox batch or timer that failed.
 */
export type ReplayFailure =
  | { kind: 'event'; entityId?: string; eventId?: string; error: string }
  | { kind: 'unrouted'; source: string; eventType: string; error: string }
  | { kind: 'listener'; rule: string; eventType: string; error: string }
  | { kind: 'outbox'; records: number; error: string }
  | { kind: 'timer'; name: string; entityId: string; error: string };

/** The envelope id of an execution's input, or of a dead letter's body: both are the EventBridge event. */
const envelopeId = (value: unknown): unknown => (value as { id?: unknown } | null)?.id;

/**
 * Every event the session did not apply or record as a duplicate: each failed execution (with the
 * reason its dead letter carries, or the execution's own error when it failed without one), each
 * event queued by the catch-all rule, and every listener, outbox and timer failure.
 */
export function failuresOf(session: LifecycleSession): ReplayFailure[] {
  const { key } = session.definition.entity;
  const events = session.failedExecutions.map((execution): ReplayFailure => {
    const input = execution.input as { detail?: Record<string, unknown> } | null;
    const deadLetter = session.sentDeadLetters.find((d) => envelopeId(d.body) === envelopeId(input))?.body as
      | { error?: { Error?: string; Cause?: string }; detail?: { Error?: string; Cause?: string } }
      | undefined;
    // An oversize event's refusal stands in place of its detail (see LifecycleWorkflow).
    const reason = deadLetter?.error ??
      deadLetter?.detail ?? {
        Error: execution.error?.Error ?? execution.status,
        Cause: `${execution.error?.Cause ?? ''} (not dead-lettered)`,
      };
    const entityId = input?.detail?.[key];
    const eventId = input?.detail?.eventId ?? envelopeId(input);
    return {
      kind: 'event',
      ...(typeof entityId === 'string' && { entityId }),
      ...(typeof eventId === 'string' && { eventId }),
      error: [reason.Error, causeMessage(reason.Cause)].filter(Boolean).join(': '),
    };
  });
  const unrouted = session.queuedEvents.map(
    (q): ReplayFailure => ({
      kind: 'unrouted',
      source: q.event.source,
      eventType: q.event['detail-type'],
      error: `no rule of ${session.definition.name} applies events from this source`,
    }),
  );
  const listeners = session.listenerDeadLetters.map(
    (d): ReplayFailure => ({
      kind: 'listener',
      rule: d.ruleLogicalId,
      eventType: d.event['detail-type'],
      error: d.error.message,
    }),
  );
  const { outbox, timers } = session.publishDeadLetters;
  return [
    ...events,
    ...unrouted,
    ...listeners,
    ...outbox.map((d): ReplayFailure => ({ kind: 'outbox', records: d.records.length, error: d.error })),
    ...timers.map(
      (d): ReplayFailure => ({ kind: 'timer', name: d.request.name, entityId: d.request.entityId, error: d.error }),
    ),
  ];
}
