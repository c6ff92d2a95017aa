import { dirname } from 'node:path';
import { Duration, Stack, type StackProps, Validations } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import { SqsDestination } from 'aws-cdk-lib/aws-lambda-destinations';
import * as pipes from 'aws-cdk-lib/aws-pipes';
import * as scheduler from 'aws-cdk-lib/aws-scheduler';
import type * as sns from 'aws-cdk-lib/aws-sns';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { ConfigError } from '../../core/errors.ts';
import type { AgentConfig } from '../../definitions/lifecycle/agent-config.ts';
import { hasTimers } from '../../definitions/lifecycle/delays.ts';
import { loadAgentConfig, NO_AGENT } from '../../definitions/lifecycle/loader.ts';
import type { LifecycleDefinition } from '../../definitions/lifecycle/schema.ts';
import { LIFECYCLE_SOURCE } from '../../definitions/lifecycle/schema.ts';
import { type EnvConfig, emailSettings, type LifecycleSettings } from '../../project/config.ts';
import { FOLLOW_UP_DUE, stateChangedType } from '../../runtime/lifecycle/envelope.ts';
import { EXPIRES_AT_ATTRIBUTE, OUTBOX_SK_PREFIX } from '../../runtime/lifecycle/store.ts';
import { countAlarm } from '../constructs/alarms.ts';
import { LifecycleDashboard } from '../constructs/lifecycle-dashboard.ts';
import { LifecycleWorkflow } from '../constructs/lifecycle-workflow.ts';
import { alarmTopic, stepwiseTable } from '../constructs/resources.ts';
import { StepwiseFunction } from '../constructs/stepwise-function.ts';
import { lifecycleBusName, pascalCase } from '../names.ts';

/** The EventBridge Scheduler group that holds every entity's one-time timers. */
export const timersGroupName = (lifecycle: string, env: string): string => `stepwise-${env}-${lifecycle}-timers`;

/** The handler modules of the listeners (on `<entity>.state_changed`, and the follow-up sender on `follow_up.due`), each behind a feature. */
export const LISTENER_ENTRIES = {
  crmSync: 'runtime/lifecycle/handlers/crm-sync.ts',
  notifier: 'runtime/lifecycle/handlers/notifier.ts',
  timers: 'runtime/lifecycle/handlers/timers.ts',
  followUpSender: 'runtime/lifecycle/handlers/follow-up-sender.ts',
} as const;
export type ListenerName = keyof typeof LISTENER_ENTRIES;
/** The outbox publisher: the enrichment of the pipe from the table's stream to the bus. */
export const OUTBOX_ENTRY = 'runtime/lifecycle/handlers/outbox.ts';

/**
 * The pipe's filter: new outbox items only (the stream also carries events, markers and
 * projections). Shared with the local pipe, which applies the same pattern.
 */
export const OUTBOX_FILTER = {
  eventName: ['INSERT'],
  dynamodb: { NewImage: { sk: { S: [{ prefix: OUTBOX_SK_PREFIX }] } } },
} as const;

export interface LifecycleStackProps extends StackProps {
  readonly config: EnvConfig;
  /** The loaded statechart (`loadLifecycle(name)`). */
  readonly lifecycle: LifecycleDefinition;
  /** The agent's goal, stop conditions and timers. @default the environment's agent (`lifecycles.<name>.agent`), else none */
  readonly agentConfig?: AgentConfig;
  /** Notified by every alarm of this stack. @default the environment's alarm topic (`alarms.email`), else nobody */
  readonly alarmTopic?: sns.ITopic;
}

/** A listener: its function, the rule that feeds it and the queue its failed deliveries land in. */
export interface Listener {
  readonly function: StepwiseFunction;
  readonly rule: events.Rule;
  readonly deadLetterQueue: sqs.Queue;
}

/** The transactional outbox: the pipe from the table's stream to the bus, its publisher function and dead-letter queue. */
export interface Outbox {
  readonly pipe: pipes.CfnPipe;
  readonly role: iam.Role;
  readonly publisher: StepwiseFunction;
  readonly deadLetterQueue: sqs.Queue;
}

/** Where the entity timers live: the schedule group, the role schedules deliver with, and their dead-letter queue. */
export interface LifecycleTimers {
  readonly group: scheduler.ScheduleGroup;
  readonly role: iam.Role;
  readonly deadLetterQueue: sqs.Queue;
}

/** The settings a lifecycle's features need, checked: one line naming the field when one is missing. */
function settingsFor(config: EnvConfig, def: LifecycleDefinition): LifecycleSettings {
  const settings = Object.hasOwn(config.lifecycles, def.name) ? config.lifecycles[def.name]! : {};
  const missing = (field: keyof LifecycleSettings, feature: string) =>
    new ConfigError(
      `environment "${config.name}": lifecycles.${def.name}.${field}: required by features.${feature} of ${def.file}`,
    );
  if (def.features.crmSync && !settings.crmWebhookUrl) throw missing('crmWebhookUrl', 'crmSync');
  if (def.features.followUps && !settings.followUpWebhookUrl && !settings.crmWebhookUrl)
    throw missing('followUpWebhookUrl', 'followUps');
  return settings;
}

/**
 * One lifecycle on AWS, from its `statemachines/<name>/statechart.yaml`: the event store
 * table, the lifecycle's own EventBridge bus, the Express state machine compiled from the
 * statechart, the outbox pipe, and what the statechart's features add (timers, listeners).
 *
 * - Rule `Incoming<Entity>Events`: every event from the lifecycle's sources (`sources` in the
 *   statechart, `stepwise.replay`, and `stepwise.scheduler` with timers) → the state machine (the
 *   event is its input). An event that names no entity is not dropped: the state machine refuses
 *   it into the incoming dead-letter queue, with its reason, like any event it cannot apply.
 * - Rule `UnknownSources`: anything else on the bus that the lifecycle did not publish itself →
 *   the unknown-events queue (a misspelt source would otherwise match no rule and vanish).
 * - Outbox: the state machine writes each state change into the table in the same transaction as
 *   the change; an EventBridge Pipe reads the table's stream (new outbox items only), its
 *   enrichment function turns the items into details and the pipe puts them on the bus as
 *   `<entity>.state_changed` (source `stepwise.lifecycle`). Retries with bisection, then a
 *   dead-letter queue: a committed change is published at least once.
 * - Features: `crmSync` → CRM sync listener; `notify` → notifier (only changes to a notify
 *   state); `followUps`/`renewals` and delayed transitions (`after`) → the timers listener (sets the entity's EventBridge Scheduler
 *   schedules), the schedule group with its own role, retry policy and dead-letter queue, and with
 *   follow-ups the follow-up sender on `follow_up.due`.
 * - Every target has an encrypted SQS dead-letter queue and a retry policy; Lambda listeners also
 *   send invocations that failed after Lambda's retries to their queue, and the state machine sends
 *   events it could not apply to the incoming queue. An alarm watches every queue, every function's
 *   errors and throttles, and the state machine's failed and timed-out executions; a dashboard
 *   shows them with the events applied.
 */
export class LifecycleStack extends Stack {
  readonly config: EnvConfig;
  readonly definition: LifecycleDefinition;
  /** The event store (`LIFECYCLE_TABLE`), with a `NEW_IMAGE` stream for the outbox. */
  readonly table: dynamodb.Table;
  readonly eventBus: events.EventBus;
  readonly lifecycle: LifecycleWorkflow;
  readonly incomingRule: events.Rule;
  /** Events the bus could not deliver to the state machine, and events the state machine could not apply (with the reason). */
  readonly incomingDeadLetters: sqs.Queue;
  /** Events on the bus from a source the lifecycle neither applies nor publishes. */
  readonly unknownSourceEvents: sqs.Queue;
  readonly outbox: Outbox;
  /** With the followUps or renewals feature, or a delayed transition (`after`). */
  readonly timers?: LifecycleTimers;
  /** The listeners the statechart's features ask for. */
  readonly listeners: Readonly<Partial<Record<ListenerName, Listener>>>;
  readonly dashboard: cloudwatch.Dashboard;
  private readonly alarmTopic?: sns.ITopic;

  constructor(scope: Construct, id: string, props: LifecycleStackProps) {
    const { config, lifecycle: def } = props;
    super(scope, id, { ...props, terminationProtection: props.terminationProtection ?? config.terminationProtection });
    this.config = config;
    this.definition = def;
    this.alarmTopic = props.alarmTopic ?? alarmTopic(this, config);
    const settings = settingsFor(config, def);
    const agentConfig = props.agentConfig ?? (settings.agent ? loadAgentConfig(settings.agent, def.name) : NO_AGENT);
    // Named after the entity: `OrdersTable`, `OrdersBus`, `IncomingOrderEvents` for an order lifecycle.
    const entities = pascalCase(def.entity.plural);

    this.table = stepwiseTable(this, `${entities}Table`, config, { timeToLiveAttribute: EXPIRES_AT_ATTRIBUTE });
    // The outbox is read from the stream; NEW_IMAGE is all the publisher needs.
    (this.table.node.defaultChild as dynamodb.CfnTable).streamSpecification = { streamViewType: 'NEW_IMAGE' };
    this.eventBus = new events.EventBus(this, `${entities}Bus`, {
      eventBusName: lifecycleBusName(def.name, config.name),
    });
    this.incomingDeadLetters = this.deadLetterQueue(
      'IncomingDeadLetters',
      `${def.entity.name} events that were not applied (the message carries the reason)`,
    );
    this.lifecycle = new LifecycleWorkflow(this, 'Lifecycle', {
      lifecycle: def,
      agentConfig,
      config,
      table: this.table,
      deadLetterQueue: this.incomingDeadLetters,
      alarmTopic: this.alarmTopic,
    });
    this.incomingRule = this.createIncomingRule();
    this.unknownSourceEvents = this.createUnknownSourceEvents();

    this.outbox = this.createOutbox();
    if (hasTimers(def)) this.timers = this.createTimers();
    this.listeners = this.createListeners(settings, agentConfig);
    this.dashboard = this.createDashboard();
  }

  /** Rule `Incoming<Entity>Events`: every event from the lifecycle's sources → its state machine. */
  private createIncomingRule(): events.Rule {
    const def = this.definition;
    return new events.Rule(this, `Incoming${pascalCase(def.entity.name)}Events`, {
      eventBus: this.eventBus,
      description: `Events from ${def.sources.join(', ')} -> the ${def.name} state machine (one without detail.${def.entity.key} is refused there, with its reason)`,
      eventPattern: { source: [...def.sources] },
      targets: [
        new targets.SfnStateMachine(this.lifecycle.stateMachine, {
          deadLetterQueue: this.incomingDeadLetters,
          retryAttempts: 8,
          maxEventAge: Duration.hours(24),
        }),
      ],
    });
  }

  /** The queue of events from a source the lifecycle neither applies nor publishes, fed by rule `UnknownSources`. */
  private createUnknownSourceEvents(): sqs.Queue {
    const def = this.definition;
    const queue = this.deadLetterQueue(
      'UnknownSourceEvents',
      `events on the ${def.name} bus from a source it does not apply (${def.sources.join(', ')})`,
    );
    new events.Rule(this, 'UnknownSources', {
      eventBus: this.eventBus,
      description: `Events from any other source than ${def.sources.join(', ')} and ${LIFECYCLE_SOURCE} -> a queue, so none vanishes`,
      eventPattern: { source: events.Match.anythingBut(...def.sources, LIFECYCLE_SOURCE) },
      targets: [
        new targets.SqsQueue(queue, {
          deadLetterQueue: this.incomingDeadLetters,
          retryAttempts: 8,
          maxEventAge: Duration.hours(24),
        }),
      ],
    });
    return queue;
  }

  /** The listeners the statechart's features ask for, each with the settings and grants it needs. */
  private createListeners(
    settings: LifecycleSettings,
    agentConfig: AgentConfig,
  ): Partial<Record<ListenerName, Listener>> {
    const def = this.definition;
    const { followUps, crmSync, notify } = def.features;
    const agentEnv = { AGENT_CONFIG: JSON.stringify(agentConfig) };
    const timerEnv = this.timers && {
      SCHEDULE_GROUP: this.timers.group.scheduleGroupName,
      SCHEDULER_ROLE_ARN: this.timers.role.roleArn,
      LIFECYCLE_BUS_ARN: this.eventBus.eventBusArn,
      TIMERS_DLQ_ARN: this.timers.deadLetterQueue.queueArn,
    };
    const changed = stateChangedType(def);
    const listeners: Partial<Record<ListenerName, Listener>> = {};
    if (crmSync)
      listeners.crmSync = this.listener(
        'crmSync',
        `writes ${def.entity.name} state changes back to the CRM`,
        changed,
        {},
        { CRM_WEBHOOK_URL: settings.crmWebhookUrl! },
      );
    if (notify) {
      const { mailFrom } = emailSettings(this.config, `the ${def.name} lifecycle's notifier`);
      listeners.notifier = this.listener(
        'notifier',
        `emails the client's team about notable ${def.entity.name} state changes`,
        changed,
        { to: [...notify.states] },
        {
          NOTIFY_TO: settings.notifyEmail ?? mailFrom,
        },
      );
      listeners.notifier.function.bindEmailSender(mailFrom);
    }
    if (timerEnv) {
      listeners.timers = this.listener(
        'timers',
        `sets the ${def.entity.name}'s timers (follow-ups, renewals, delayed transitions)`,
        changed,
        {},
        { ...agentEnv, ...timerEnv },
      );
      this.grantTimers(listeners.timers.function);
    }
    if (followUps && timerEnv) {
      const followUpWebhookUrl =
        settings.followUpWebhookUrl ?? new URL('/stepwise/follow-up', settings.crmWebhookUrl).href;
      listeners.followUpSender = this.listener(
        'followUpSender',
        'sends a due follow-up and sets the next one',
        FOLLOW_UP_DUE,
        {},
        {
          ...agentEnv,
          ...timerEnv,
          FOLLOW_UP_WEBHOOK_URL: followUpWebhookUrl,
        },
      );
      this.grantTimers(listeners.followUpSender.function);
      listeners.followUpSender.function.bindTable(this.table, 'read', 'LIFECYCLE_TABLE');
      this.eventBus.grantPutEventsTo(listeners.followUpSender.function);
    }
    return listeners;
  }

  /** The dashboard of every function and dead-letter queue of the stack, with the state machine's executions. */
  private createDashboard(): cloudwatch.Dashboard {
    const listeners = Object.values(this.listeners);
    const functions = [
      ...Object.values(this.lifecycle.functions),
      this.outbox.publisher,
      ...listeners.map((l) => l.function),
    ];
    return new LifecycleDashboard(this, 'Dashboard', {
      lifecycle: this.definition,
      config: this.config,
      stateMachine: this.lifecycle.stateMachine,
      functions,
      queues: [
        this.incomingDeadLetters,
        this.unknownSourceEvents,
        this.outbox.deadLetterQueue,
        ...listeners.map((l) => l.deadLetterQueue),
        ...(this.timers ? [this.timers.deadLetterQueue] : []),
      ],
      alarmTopic: this.alarmTopic,
    }).dashboard;
  }

  /**
   * An encrypted queue that keeps what could not be delivered for 14 days, with an alarm as soon as anything lands in
   * it.
   */
  private deadLetterQueue(id: string, what: string): sqs.Queue {
    const queue = new sqs.Queue(this, id, {
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });
    Validations.of(queue).acknowledge({ id: 'AwsSolutions-SQS3', reason: 'This queue is itself a dead-letter queue.' });
    countAlarm(this, `${id}Alarm`, {
      metric: queue.metricApproximateNumberOfMessagesVisible({
        period: Duration.minutes(5),
        statistic: cloudwatch.Stats.MAXIMUM,
      }),
      threshold: 1,
      description: `${this.definition.name} (${this.config.name}): ${what} - see the ${id} queue.`,
      topic: this.alarmTopic,
    });
    return queue;
  }

  /** A listener function on `detailType` from `stepwise.lifecycle` (narrowed by `detail` when given), with its rule and dead-letter queue. */
  private listener(
    name: ListenerName,
    description: string,
    detailType: string,
    detail: Record<string, unknown>,
    environment: Record<string, string>,
  ): Listener {
    const def = this.definition;
    const id = name.charAt(0).toUpperCase() + name.slice(1);
    const deadLetterQueue = this.deadLetterQueue(`${id}DeadLetters`, `${name} deliveries that failed`);
    const fn = new StepwiseFunction(this, id, {
      entry: LISTENER_ENTRIES[name],
      config: this.config,
      serviceName: def.name,
      // The statechart ships with the code: the features' states and events come from it.
      workflowDir: dirname(def.file),
      description: `${def.name} listener: ${description}`,
      timeout: Duration.seconds(30),
      environment: { LIFECYCLE: def.name, ...environment },
    });
    // Invocation errors after Lambda's own retries (the rule's dead-letter queue only sees delivery failures).
    fn.configureAsyncInvoke({
      retryAttempts: 2,
      maxEventAge: Duration.hours(6),
      onFailure: new SqsDestination(deadLetterQueue),
    });
    const rule = new events.Rule(this, `${id}Rule`, {
      eventBus: this.eventBus,
      description: `${detailType} -> ${name}`,
      eventPattern: {
        source: [LIFECYCLE_SOURCE],
        detailType: [detailType],
        ...(Object.keys(detail).length > 0 && { detail }),
      },
      targets: [new targets.LambdaFunction(fn, { deadLetterQueue, retryAttempts: 4, maxEventAge: Duration.hours(2) })],
    });
    return { function: fn, rule, deadLetterQueue };
  }

  /**
   * The outbox pipe: table stream (from the oldest record, so nothing committed is skipped) →
   * filter (new outbox items) → publisher (enrichment) → the lifecycle's bus as `<entity>.state_changed`.
   */
  private createOutbox(): Outbox {
    const def = this.definition;
    const deadLetterQueue = this.deadLetterQueue(
      'OutboxDeadLetters',
      'state changes the outbox pipe could not publish',
    );
    const publisher = new StepwiseFunction(this, 'OutboxPublisher', {
      entry: OUTBOX_ENTRY,
      config: this.config,
      serviceName: def.name,
      description: `${def.name} outbox: turns new outbox items of the table stream into ${stateChangedType(def)} details`,
      timeout: Duration.seconds(30),
    });
    const table = this.table.node.defaultChild as dynamodb.CfnTable;
    const role = new iam.Role(this, 'OutboxPipeRole', {
      assumedBy: new iam.ServicePrincipal('pipes.amazonaws.com', {
        conditions: { StringEquals: { 'aws:SourceAccount': this.account } },
      }),
    });
    role.addToPolicy(
      new iam.PolicyStatement({
        actions: [
          'dynamodb:DescribeStream',
          'dynamodb:GetRecords',
          'dynamodb:GetShardIterator',
          'dynamodb:ListStreams',
        ],
        resources: [table.attrStreamArn],
      }),
    );
    publisher.grantInvoke(role);
    this.eventBus.grantPutEventsTo(role);
    deadLetterQueue.grantSendMessages(role);
    const pipe = new pipes.CfnPipe(this, 'OutboxPipe', {
      description: `${stateChangedType(def)} from the ${def.name} table stream (transactional outbox) to its bus`,
      roleArn: role.roleArn,
      source: table.attrStreamArn,
      sourceParameters: {
        dynamoDbStreamParameters: {
          startingPosition: 'TRIM_HORIZON',
          batchSize: 10,
          maximumRetryAttempts: 10,
          maximumRecordAgeInSeconds: -1,
          onPartialBatchItemFailure: 'AUTOMATIC_BISECT',
          deadLetterConfig: { arn: deadLetterQueue.queueArn },
        },
        filterCriteria: { filters: [{ pattern: JSON.stringify(OUTBOX_FILTER) }] },
      },
      enrichment: publisher.functionArn,
      target: this.eventBus.eventBusArn,
      targetParameters: {
        eventBridgeEventBusParameters: { detailType: stateChangedType(def), source: LIFECYCLE_SOURCE },
      },
    });
    pipe.node.addDependency(role);
    Validations.of(role).acknowledge({
      id: `AwsSolutions-IAM5[Resource::<${this.getLogicalId(publisher.node.defaultChild as lambda.CfnFunction)}.Arn>:*]`,
      reason: 'lambda:InvokeFunction on the outbox publisher and its versions only.',
    });
    return { pipe, role, publisher, deadLetterQueue };
  }

  /** The schedule group, the role schedules put events with, and the queue of deliveries that failed every retry. */
  private createTimers(): LifecycleTimers {
    const def = this.definition;
    const groupName = timersGroupName(def.name, this.config.name);
    const group = new scheduler.ScheduleGroup(this, 'TimerGroup', { scheduleGroupName: groupName });
    const deadLetterQueue = this.deadLetterQueue(
      'TimerDeadLetters',
      `${def.entity.name} timers (follow-ups, renewals, delayed transitions) EventBridge Scheduler could not deliver`,
    );
    const role = new iam.Role(this, 'TimerDeliveryRole', {
      description: `EventBridge Scheduler delivers ${def.entity.name} timers to the ${def.name} bus with this role`,
      assumedBy: new iam.ServicePrincipal('scheduler.amazonaws.com', {
        // Only schedules of this group (the confused-deputy guard Scheduler documents).
        conditions: {
          StringEquals: { 'aws:SourceAccount': this.account },
          ArnLike: {
            'aws:SourceArn': this.formatArn({
              service: 'scheduler',
              resource: 'schedule',
              resourceName: `${groupName}/*`,
            }),
          },
        },
      }),
    });
    this.eventBus.grantPutEventsTo(role);
    deadLetterQueue.grantSendMessages(role);
    return { group, role, deadLetterQueue };
  }

  /** Create, read, update and delete schedules in the timer group, and pass the delivery role to them. */
  private grantTimers(fn: StepwiseFunction): void {
    const { group, role } = this.timers!;
    group.grantReadSchedules(fn);
    group.grantWriteSchedules(fn);
    group.grantDeleteSchedules(fn);
    role.grantPassRole(fn.grantPrincipal);
    Validations.of(fn.role!).acknowledge({
      id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:scheduler:<AWS::Region>:<AWS::AccountId>:schedule/${timersGroupName(this.definition.name, this.config.name)}/*]`,
      reason: 'Timers are one schedule per entity, created at run time in the lifecycle timer group only.',
    });
  }
}
