import { Duration, Stack, Validations, type StackProps } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import { SqsDestination } from 'aws-cdk-lib/aws-lambda-destinations';
import * as logs from 'aws-cdk-lib/aws-logs';
import type * as sns from 'aws-cdk-lib/aws-sns';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import * as tasks from 'aws-cdk-lib/aws-stepfunctions-tasks';
import type { Construct } from 'constructs';
import type { AgentConfig } from '../../lambdas/lifecycle/conditions.ts';
import { FOLLOW_UP_DUE, LEAD_EVENT_SOURCES, LIFECYCLE_SOURCE, STATE_CHANGED } from '../../lambdas/lifecycle/envelope.ts';
import { loadAgentConfig, loadLifecycle } from '../../lambdas/lifecycle/loader.ts';
import type { LifecycleDefinition } from '../../lambdas/lifecycle/schema.ts';
import { NOTIFY_STATES } from '../../lambdas/lifecycle/state-changes.ts';
import type { EnvConfig } from '../config.ts';
import { LifecycleWorkflow } from '../constructs/lifecycle-workflow.ts';
import { StepwiseFunction } from '../constructs/stepwise-function.ts';
import { alarmTopic, stepwiseTable } from '../constructs/resources.ts';


/** The stack's name in an environment. */
export const leadLifecycleStackName = (config: EnvConfig): string => `Stepwise-LeadLifecycle-${config.name}`;
/** The custom bus CRM and agent events are put on, and `lead.state_changed` is published to. */
export const leadsBusName = (config: EnvConfig): string => `stepwise-${config.name}-leads`;

/** The handler modules of the listeners on `lead.state_changed`. */
export const LISTENER_ENTRIES = {
  crmSync: 'lambdas/lifecycle/handlers/crm-sync.ts',
  notifier: 'lambdas/lifecycle/handlers/notifier.ts',
  followUpScheduler: 'lambdas/lifecycle/handlers/follow-up-scheduler.ts',
} as const;
export type ListenerName = keyof typeof LISTENER_ENTRIES;

export interface LeadLifecycleStackProps extends StackProps {
  readonly config: EnvConfig;
  /** @default loadLifecycle() (lead-lifecycle) */
  readonly lifecycle?: LifecycleDefinition;
  /** The agent's goal and follow-up stop conditions. @default loadAgentConfig(config.leads.agent) */
  readonly agentConfig?: AgentConfig;
  /** How long after a lead becomes eligible its follow-up is due. @default Duration.days(2) */
  readonly followUpDelay?: Duration;
  /** Notified by every alarm of this stack. @default alarms notify nobody */
  readonly alarmTopic?: sns.ITopic;
}

/** A listener: its function, the rule that feeds it and the queue its failed deliveries land in. */
export interface Listener {
  readonly function: StepwiseFunction;
  readonly rule: events.Rule;
  readonly deadLetterQueue: sqs.Queue;
}

/**
 * The lead lifecycle on AWS (seed 002): the event store table, the custom EventBridge bus, the
 * Express state machine compiled from the statechart, and the listeners on `lead.state_changed`.
 *
 * - Rule `IncomingLeadEvents`: events from `stepwise.crm`, `stepwise.agent` or `stepwise.replay`
 *   with a `detail.leadId` → the lifecycle state machine (the event is its input).
 * - Rules on `lead.state_changed` (source `stepwise.lifecycle`) → CRM sync, notifier (only changes
 *   to a notify state) and follow-up scheduler functions.
 * - Every target has an encrypted SQS dead-letter queue and a retry policy; Lambda listeners also
 *   send invocations that failed after Lambda's retries to their queue, and the state machine sends
 *   events it could not apply to the incoming queue. An alarm watches every queue.
 * - The follow-up timer (a Standard state machine) waits until a follow-up is due, then publishes
 *   `follow_up.due` `{ leadId, version, dueAt }` for the agent's sender, which skips it when the
 *   lead's version moved on.
 */
export class LeadLifecycleStack extends Stack {
  readonly config: EnvConfig;
  /** The event store (`LEADS_TABLE`). */
  readonly leadsTable: dynamodb.Table;
  readonly eventBus: events.EventBus;
  readonly lifecycle: LifecycleWorkflow;
  readonly incomingRule: events.Rule;
  /** Events the bus could not deliver to the state machine, and events the state machine could not apply. */
  readonly incomingDeadLetters: sqs.Queue;
  readonly listeners: Readonly<Record<ListenerName, Listener>>;
  readonly followUpTimer: sfn.StateMachine;
  private readonly alarmTopic?: sns.ITopic;

  constructor(scope: Construct, id: string, props: LeadLifecycleStackProps) {
    const { config } = props;
    super(scope, id, { ...props, terminationProtection: props.terminationProtection ?? config.terminationProtection });
    this.config = config;
    this.alarmTopic = props.alarmTopic ?? alarmTopic(this, config);
    const lifecycle = props.lifecycle ?? loadLifecycle();

    this.leadsTable = stepwiseTable(this, 'LeadsTable', config);
    this.eventBus = new events.EventBus(this, 'LeadsBus', { eventBusName: leadsBusName(config) });
    this.incomingDeadLetters = this.deadLetterQueue('IncomingDeadLetters', 'lead events that were not applied');

    this.lifecycle = new LifecycleWorkflow(this, 'Lifecycle', {
      lifecycle,
      agentConfig: props.agentConfig ?? loadAgentConfig(config.leads.agent, lifecycle.name),
      config,
      leadsTable: this.leadsTable,
      eventBus: this.eventBus,
      deadLetterQueue: this.incomingDeadLetters,
      alarmTopic: this.alarmTopic,
    });
    this.incomingRule = new events.Rule(this, 'IncomingLeadEvents', {
      eventBus: this.eventBus,
      description: `CRM and agent events about a lead -> the ${lifecycle.name} state machine`,
      eventPattern: { source: [...LEAD_EVENT_SOURCES], detail: { leadId: [{ exists: true }] } },
      targets: [
        new targets.SfnStateMachine(this.lifecycle.stateMachine, {
          deadLetterQueue: this.incomingDeadLetters,
          retryAttempts: 8,
          maxEventAge: Duration.hours(24),
        }),
      ],
    });

    this.followUpTimer = this.createFollowUpTimer();
    const delay = props.followUpDelay ?? Duration.days(2);
    this.listeners = {
      crmSync: this.listener('crmSync', 'writes lead state changes back to the CRM', {}, { CRM_WEBHOOK_URL: config.leads.crmWebhookUrl }),
      notifier: this.listener('notifier', "emails the client's team about notable lead state changes", { to: [...NOTIFY_STATES] }, { NOTIFY_TO: config.leads.notifyEmail ?? config.email.mailFrom }),
      followUpScheduler: this.listener('followUpScheduler', 'schedules the next follow-up when the lead can receive one', {}, {
        FOLLOW_UP_TIMER_ARN: this.followUpTimer.stateMachineArn,
        FOLLOW_UP_DELAY_SECONDS: String(delay.toSeconds()),
      }),
    };
    this.listeners.notifier.function.bindEmailSender(config.email.mailFrom);
    this.followUpTimer.grantStartExecution(this.listeners.followUpScheduler.function);
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

  /** A listener function on `lead.state_changed` (narrowed by `detail` when given), with its rule and dead-letter queue. */
  private listener(name: ListenerName, description: string, detail: Record<string, unknown>, environment: Record<string, string>): Listener {
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
      description: `${STATE_CHANGED} -> ${name}`,
      eventPattern: { source: [LIFECYCLE_SOURCE], detailType: [STATE_CHANGED], ...(Object.keys(detail).length > 0 && { detail }) },
      targets: [new targets.LambdaFunction(fn, { deadLetterQueue, retryAttempts: 4, maxEventAge: Duration.hours(2) })],
    });
    return { function: fn, rule, deadLetterQueue };
  }

  /** Waits until `$.dueAt`, then publishes `follow_up.due` with the request. */
  private createFollowUpTimer(): sfn.StateMachine {
    const wait = new sfn.Wait(this, 'WaitUntilDue', { time: sfn.WaitTime.timestampPath('$.dueAt') });
    const publish = new tasks.EventBridgePutEvents(this, 'PublishFollowUpDue', {
      entries: [{ eventBus: this.eventBus, source: LIFECYCLE_SOURCE, detailType: FOLLOW_UP_DUE, detail: sfn.TaskInput.fromJsonPathAt('$') }],
    });
    publish.addRetry({ errors: [sfn.Errors.TASKS_FAILED], interval: Duration.seconds(5), maxAttempts: 3, backoffRate: 2, jitterStrategy: sfn.JitterType.FULL });
    const timer = new sfn.StateMachine(this, 'FollowUpTimer', {
      definitionBody: sfn.DefinitionBody.fromChainable(wait.next(publish)),
      stateMachineType: sfn.StateMachineType.STANDARD,
      tracingEnabled: true,
      logs: {
        destination: new logs.LogGroup(this, 'FollowUpTimerLogs', { retention: this.config.logRetention, removalPolicy: this.config.removalPolicy }),
        level: sfn.LogLevel.ALL,
        includeExecutionData: this.config.executionDataInLogs,
      },
    });
    Validations.of(timer.role).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason: 'CloudWatch Logs delivery (logs:*LogDelivery*) and X-Ray (PutTraceSegments) support no resource-level permissions.',
    });
    // A timer that could not publish loses a follow-up: say so at once.
    const failed = new cloudwatch.Alarm(this, 'FollowUpTimerFailedAlarm', {
      metric: timer.metricFailed({ period: Duration.minutes(5), statistic: cloudwatch.Stats.SUM }),
      threshold: 1,
      evaluationPeriods: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      alarmDescription: `Lead lifecycle (${this.config.name}): a follow-up timer failed to publish follow_up.due - see the FollowUpTimer executions.`,
    });
    if (this.alarmTopic) failed.addAlarmAction(new SnsAction(this.alarmTopic));
    return timer;
  }
}
