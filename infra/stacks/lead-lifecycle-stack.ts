import { Duration, Stack, Validations, type StackProps } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
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
import { ConfigError } from '../../lambdas/lib/errors.ts';
import type { AgentConfig } from '../../lambdas/lifecycle/conditions.ts';
import { FOLLOW_UP_DUE, LEAD_EVENT_SOURCES, LIFECYCLE_SOURCE, STATE_CHANGED } from '../../lambdas/lifecycle/envelope.ts';
import { loadAgentConfig, loadLifecycle } from '../../lambdas/lifecycle/loader.ts';
import type { LifecycleDefinition } from '../../lambdas/lifecycle/schema.ts';
import { NOTIFY_STATES } from '../../lambdas/lifecycle/state-changes.ts';
import { EXPIRES_AT_ATTRIBUTE, OUTBOX_SK_PREFIX } from '../../lambdas/lifecycle/store.ts';
import { CONFIG_FILE, emailSettings, type EnvConfig } from '../config.ts';
import { LifecycleWorkflow } from '../constructs/lifecycle-workflow.ts';
import { StepwiseFunction } from '../constructs/stepwise-function.ts';
import { alarmTopic, stepwiseTable } from '../constructs/resources.ts';

/** The stack's name in an environment. */
export const leadLifecycleStackName = (config: EnvConfig): string => `Stepwise-LeadLifecycle-${config.name}`;
/** The custom bus CRM and agent events are put on, and `lead.state_changed` is published to. */
export const leadsBusName = (config: EnvConfig): string => `stepwise-${config.name}-leads`;
/** The EventBridge Scheduler group that holds every lead's one-time timers. */
export const leadTimersGroupName = (config: EnvConfig): string => `stepwise-${config.name}-lead-timers`;

/** The handler modules of the listeners (on `lead.state_changed`, and the follow-up sender on `follow_up.due`). */
export const LISTENER_ENTRIES = {
  crmSync: 'lambdas/lifecycle/handlers/crm-sync.ts',
  notifier: 'lambdas/lifecycle/handlers/notifier.ts',
  timers: 'lambdas/lifecycle/handlers/timers.ts',
  followUpSender: 'lambdas/lifecycle/handlers/follow-up-sender.ts',
} as const;
export type ListenerName = keyof typeof LISTENER_ENTRIES;
/** The outbox publisher: the enrichment of the pipe from the table's stream to the bus. */
export const OUTBOX_ENTRY = 'lambdas/lifecycle/handlers/outbox.ts';

/**
 * The pipe's filter: new outbox items only (the stream also carries events, markers and
 * projections). Shared with the local pipe, which applies the same pattern.
 */
export const OUTBOX_FILTER = { eventName: ['INSERT'], dynamodb: { NewImage: { sk: { S: [{ prefix: OUTBOX_SK_PREFIX }] } } } } as const;

export interface LeadLifecycleStackProps extends StackProps {
  readonly config: EnvConfig;
  /** @default loadLifecycle() (lead-lifecycle) */
  readonly lifecycle?: LifecycleDefinition;
  /** The agent's goal, stop conditions and timers. @default loadAgentConfig(config.leads.agent) */
  readonly agentConfig?: AgentConfig;
  /**
   * The agent's messaging endpoint the follow-up sender POSTs follow-ups to.
   * @default `/stepwise/follow-up` on the CRM webhook's host (config.leads.crmWebhookUrl)
   */
  readonly followUpWebhookUrl?: string;
  /** Notified by every alarm of this stack. @default alarms notify nobody */
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

/** Where the lead timers live: the schedule group, the role schedules deliver with, and their dead-letter queue. */
export interface LeadTimers {
  readonly group: scheduler.ScheduleGroup;
  readonly role: iam.Role;
  readonly deadLetterQueue: sqs.Queue;
}

/**
 * The lead lifecycle on AWS (seed 002): the event store table, the custom EventBridge bus, the
 * Express state machine compiled from the statechart, the outbox pipe, the lead timers and the listeners.
 *
 * - Rule `IncomingLeadEvents`: events from `stepwise.crm`, `stepwise.agent`, `stepwise.replay` or
 *   `stepwise.scheduler` with a `detail.leadId` → the lifecycle state machine (the event is its input).
 * - Outbox: the state machine writes each `lead.state_changed` into the table in the same
 *   transaction as the change; an EventBridge Pipe reads the table's stream (new outbox items
 *   only), its enrichment function turns the items into details and the pipe puts them on the bus.
 *   Retries with bisection, then a dead-letter queue: a committed change is published at least once.
 * - Rules on `lead.state_changed` (source `stepwise.lifecycle`) → CRM sync, notifier (only changes
 *   to a notify state) and timers (sets the lead's EventBridge Scheduler schedules).
 * - Timers: one-time schedules in the `LeadTimers` group deliver `follow_up.due` (→ the follow-up
 *   sender) and `renewal.due` (→ the lifecycle) to the bus with their own role, retry policy and
 *   dead-letter queue.
 * - Every target has an encrypted SQS dead-letter queue and a retry policy; Lambda listeners also
 *   send invocations that failed after Lambda's retries to their queue, and the state machine sends
 *   events it could not apply to the incoming queue. An alarm watches every queue.
 */
export class LeadLifecycleStack extends Stack {
  readonly config: EnvConfig;
  /** The event store (`LEADS_TABLE`), with a `NEW_IMAGE` stream for the outbox. */
  readonly leadsTable: dynamodb.Table;
  readonly eventBus: events.EventBus;
  readonly lifecycle: LifecycleWorkflow;
  readonly incomingRule: events.Rule;
  /** Events the bus could not deliver to the state machine, and events the state machine could not apply. */
  readonly incomingDeadLetters: sqs.Queue;
  readonly outbox: Outbox;
  readonly timers: LeadTimers;
  readonly listeners: Readonly<Record<ListenerName, Listener>>;
  private readonly alarmTopic?: sns.ITopic;

  constructor(scope: Construct, id: string, props: LeadLifecycleStackProps) {
    const { config } = props;
    super(scope, id, { ...props, terminationProtection: props.terminationProtection ?? config.terminationProtection });
    this.config = config;
    this.alarmTopic = props.alarmTopic ?? alarmTopic(this, config);
    const lifecycle = props.lifecycle ?? loadLifecycle();
    if (!config.leads) throw new ConfigError(`environment "${config.name}": leads: required by the ${lifecycle.name} lifecycle (agent, crmWebhookUrl), in ${CONFIG_FILE}`);
    const leads = config.leads;
    const { mailFrom } = emailSettings(config, `the ${lifecycle.name} lifecycle's notifier`);
    const agentConfig = props.agentConfig ?? loadAgentConfig(leads.agent, lifecycle.name);

    this.leadsTable = stepwiseTable(this, 'LeadsTable', config, { timeToLiveAttribute: EXPIRES_AT_ATTRIBUTE });
    // The outbox is read from the stream; NEW_IMAGE is all the publisher needs.
    (this.leadsTable.node.defaultChild as dynamodb.CfnTable).streamSpecification = { streamViewType: 'NEW_IMAGE' };
    this.eventBus = new events.EventBus(this, 'LeadsBus', { eventBusName: leadsBusName(config) });
    this.incomingDeadLetters = this.deadLetterQueue('IncomingDeadLetters', 'lead events that were not applied');

    this.lifecycle = new LifecycleWorkflow(this, 'Lifecycle', {
      lifecycle,
      agentConfig,
      config,
      leadsTable: this.leadsTable,
      deadLetterQueue: this.incomingDeadLetters,
      alarmTopic: this.alarmTopic,
    });
    this.incomingRule = new events.Rule(this, 'IncomingLeadEvents', {
      eventBus: this.eventBus,
      description: `CRM, agent and timer events about a lead -> the ${lifecycle.name} state machine`,
      eventPattern: { source: [...LEAD_EVENT_SOURCES], detail: { leadId: [{ exists: true }] } },
      targets: [
        new targets.SfnStateMachine(this.lifecycle.stateMachine, {
          deadLetterQueue: this.incomingDeadLetters,
          retryAttempts: 8,
          maxEventAge: Duration.hours(24),
        }),
      ],
    });

    this.outbox = this.createOutbox();
    this.timers = this.createTimers();
    const agentEnv = { AGENT_CONFIG: JSON.stringify(agentConfig) };
    const timerEnv = {
      SCHEDULE_GROUP: this.timers.group.scheduleGroupName,
      SCHEDULER_ROLE_ARN: this.timers.role.roleArn,
      LEADS_BUS_ARN: this.eventBus.eventBusArn,
      TIMERS_DLQ_ARN: this.timers.deadLetterQueue.queueArn,
    };
    const followUpWebhookUrl = props.followUpWebhookUrl ?? new URL('/stepwise/follow-up', leads.crmWebhookUrl).href;
    this.listeners = {
      crmSync: this.listener('crmSync', 'writes lead state changes back to the CRM', STATE_CHANGED, {}, { CRM_WEBHOOK_URL: leads.crmWebhookUrl }),
      notifier: this.listener('notifier', "emails the client's team about notable lead state changes", STATE_CHANGED, { to: [...NOTIFY_STATES] }, { NOTIFY_TO: leads.notifyEmail ?? mailFrom }),
      timers: this.listener('timers', "sets the lead's follow-up, cold and renewal timers", STATE_CHANGED, {}, { ...agentEnv, ...timerEnv }),
      followUpSender: this.listener('followUpSender', 'sends a due follow-up and sets the next one', FOLLOW_UP_DUE, {}, {
        ...agentEnv,
        ...timerEnv,
        FOLLOW_UP_WEBHOOK_URL: followUpWebhookUrl,
      }),
    };
    this.listeners.notifier.function.bindEmailSender(mailFrom);
    for (const name of ['timers', 'followUpSender'] as const) this.grantTimers(this.listeners[name].function);
    this.listeners.followUpSender.function.bindTable(this.leadsTable, 'read', 'LEADS_TABLE');
    this.eventBus.grantPutEventsTo(this.listeners.followUpSender.function);
  }

  /** An encrypted queue that keeps what could not be delivered for 14 days, with an alarm as soon as anything lands in it. */
  private deadLetterQueue(id: string, what: string): sqs.Queue {
    const queue = new sqs.Queue(this, id, { encryption: sqs.QueueEncryption.SQS_MANAGED, enforceSSL: true, retentionPeriod: Duration.days(14) });
    Validations.of(queue).acknowledge({ id: 'AwsSolutions-SQS3', reason: 'This queue is itself a dead-letter queue.' });
    const alarm = new cloudwatch.Alarm(this, `${id}Alarm`, {
      metric: queue.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(5), statistic: cloudwatch.Stats.MAXIMUM }),
      threshold: 1,
      evaluationPeriods: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      alarmDescription: `Lead lifecycle (${this.config.name}): ${what} - see the ${id} queue.`,
    });
    if (this.alarmTopic) alarm.addAlarmAction(new SnsAction(this.alarmTopic));
    return queue;
  }

  /** A listener function on `detailType` from `stepwise.lifecycle` (narrowed by `detail` when given), with its rule and dead-letter queue. */
  private listener(name: ListenerName, description: string, detailType: string, detail: Record<string, unknown>, environment: Record<string, string>): Listener {
    const id = name.charAt(0).toUpperCase() + name.slice(1);
    const deadLetterQueue = this.deadLetterQueue(`${id}DeadLetters`, `${name} deliveries that failed`);
    const fn = new StepwiseFunction(this, id, {
      entry: LISTENER_ENTRIES[name],
      config: this.config,
      serviceName: 'lead-lifecycle',
      description: `lead-lifecycle listener: ${description}`,
      timeout: Duration.seconds(30),
      environment,
    });
    // Invocation errors after Lambda's own retries (the rule's dead-letter queue only sees delivery failures).
    fn.configureAsyncInvoke({ retryAttempts: 2, maxEventAge: Duration.hours(6), onFailure: new SqsDestination(deadLetterQueue) });
    const rule = new events.Rule(this, `${id}Rule`, {
      eventBus: this.eventBus,
      description: `${detailType} -> ${name}`,
      eventPattern: { source: [LIFECYCLE_SOURCE], detailType: [detailType], ...(Object.keys(detail).length > 0 && { detail }) },
      targets: [new targets.LambdaFunction(fn, { deadLetterQueue, retryAttempts: 4, maxEventAge: Duration.hours(2) })],
    });
    return { function: fn, rule, deadLetterQueue };
  }

  /**
   * The outbox pipe: table stream (from the oldest record, so nothing committed is skipped) →
   * filter (new outbox items) → publisher (enrichment) → leads bus as `lead.state_changed`.
   */
  private createOutbox(): Outbox {
    const deadLetterQueue = this.deadLetterQueue('OutboxDeadLetters', 'state changes the outbox pipe could not publish');
    const publisher = new StepwiseFunction(this, 'OutboxPublisher', {
      entry: OUTBOX_ENTRY,
      config: this.config,
      serviceName: 'lead-lifecycle',
      description: 'lead-lifecycle outbox: turns new outbox items of the table stream into lead.state_changed details',
      timeout: Duration.seconds(30),
    });
    const table = this.leadsTable.node.defaultChild as dynamodb.CfnTable;
    const role = new iam.Role(this, 'OutboxPipeRole', { assumedBy: new iam.ServicePrincipal('pipes.amazonaws.com', { conditions: { StringEquals: { 'aws:SourceAccount': this.account } } }) });
    role.addToPolicy(
      new iam.PolicyStatement({
        actions: ['dynamodb:DescribeStream', 'dynamodb:GetRecords', 'dynamodb:GetShardIterator', 'dynamodb:ListStreams'],
        resources: [table.attrStreamArn],
      }),
    );
    publisher.grantInvoke(role);
    this.eventBus.grantPutEventsTo(role);
    deadLetterQueue.grantSendMessages(role);
    const pipe = new pipes.CfnPipe(this, 'OutboxPipe', {
      description: `${STATE_CHANGED} from the leads table stream (transactional outbox) to the leads bus`,
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
      targetParameters: { eventBridgeEventBusParameters: { detailType: STATE_CHANGED, source: LIFECYCLE_SOURCE } },
    });
    pipe.node.addDependency(role);
    Validations.of(role).acknowledge({
      id: `AwsSolutions-IAM5[Resource::<${this.getLogicalId(publisher.node.defaultChild as lambda.CfnFunction)}.Arn>:*]`,
      reason: 'lambda:InvokeFunction on the outbox publisher and its versions only.',
    });
    return { pipe, role, publisher, deadLetterQueue };
  }

  /** The schedule group, the role schedules put events with, and the queue of deliveries that failed every retry. */
  private createTimers(): LeadTimers {
    const group = new scheduler.ScheduleGroup(this, 'LeadTimers', { scheduleGroupName: leadTimersGroupName(this.config) });
    const deadLetterQueue = this.deadLetterQueue('TimerDeadLetters', 'lead timers (follow-ups, renewals) EventBridge Scheduler could not deliver');
    const role = new iam.Role(this, 'TimerDeliveryRole', {
      description: 'EventBridge Scheduler delivers lead timers to the leads bus with this role',
      assumedBy: new iam.ServicePrincipal('scheduler.amazonaws.com', {
        // Only schedules of this group (the confused-deputy guard Scheduler documents).
        conditions: {
          StringEquals: { 'aws:SourceAccount': this.account },
          ArnLike: { 'aws:SourceArn': this.formatArn({ service: 'scheduler', resource: 'schedule', resourceName: `${leadTimersGroupName(this.config)}/*` }) },
        },
      }),
    });
    this.eventBus.grantPutEventsTo(role);
    deadLetterQueue.grantSendMessages(role);
    return { group, role, deadLetterQueue };
  }

  /** Create, read, update and delete schedules in the timer group, and pass the delivery role to them. */
  private grantTimers(fn: StepwiseFunction): void {
    const { group, role } = this.timers;
    group.grantReadSchedules(fn);
    group.grantWriteSchedules(fn);
    group.grantDeleteSchedules(fn);
    role.grantPassRole(fn.grantPrincipal);
    Validations.of(fn.role!).acknowledge({
      id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:scheduler:<AWS::Region>:<AWS::AccountId>:schedule/${leadTimersGroupName(this.config)}/*]`,
      reason: 'Timers are one schedule per lead, created at run time in the lead timer group only.',
    });
  }
}
