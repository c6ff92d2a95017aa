import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as sns from 'aws-cdk-lib/aws-sns';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import type * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import type { LifecycleDefinition } from '../../definitions/lifecycle/schema.ts';
import type { EnvConfig } from '../../project/config.ts';
import { countAlarm } from './alarms.ts';
import { metricsNamespace } from './stepwise-function.ts';

export interface LifecycleDashboardProps {
  readonly lifecycle: LifecycleDefinition;
  readonly config: EnvConfig;
  readonly stateMachine: sfn.IStateMachine;
  /**
   * Every function of the lifecycle's stack (Tasks, outbox publisher, listeners): each gets an errors and a throttles
   * alarm.
   */
  readonly functions: readonly lambda.IFunction[];
  /** The stack's dead-letter queues (each has its own depth alarm already): their depth is graphed. */
  readonly queues: readonly sqs.IQueue[];
  /** Notified by the alarms made here. @default nobody */
  readonly alarmTopic?: sns.ITopic;
  /** @default 5 minutes */
  readonly period?: Duration;
}

/**
 * What an on-call engineer watches for one lifecycle: a CloudWatch dashboard (executions, events
 * applied, duplicates and version conflicts from the handlers' metrics, dead-letter queue depths,
 * function errors, throttles and duration, and the alarms) and the alarms it adds: every function's
 * errors and throttles, and executions that timed out (failed executions and queue depths have
 * theirs where they are made). Each alarm notifies `alarmTopic` when there is one.
 */
export class LifecycleDashboard extends Construct {
  readonly dashboard: cloudwatch.Dashboard;
  readonly alarms: readonly cloudwatch.Alarm[];

  constructor(scope: Construct, id: string, props: LifecycleDashboardProps) {
    super(scope, id);
    const period = props.period ?? Duration.minutes(5);
    this.alarms = lifecycleAlarms(this, props, period);
    this.dashboard = new cloudwatch.Dashboard(this, 'Dashboard', {
      dashboardName: `stepwise-${props.lifecycle.name}-${props.config.name}`,
      defaultInterval: Duration.days(1),
      widgets: [
        ...lifecycleGraphs(props, period),
        [new cloudwatch.AlarmStatusWidget({ title: 'Alarms', alarms: [...this.alarms], width: 24, height: 4 })],
      ],
    });
  }
}

/** Executions that timed out, then every function's errors and throttles: each alarms from the first one. */
function lifecycleAlarms(scope: Construct, props: LifecycleDashboardProps, period: Duration): cloudwatch.Alarm[] {
  const { lifecycle, config, stateMachine, functions } = props;
  const alarm = (alarmId: string, metric: cloudwatch.IMetric, what: string) =>
    countAlarm(scope, alarmId, {
      metric,
      threshold: 1,
      description: `${lifecycle.name} (${config.name}): ${what}`,
      topic: props.alarmTopic,
    });
  return [
    alarm(
      'ExecutionsTimedOutAlarm',
      stateMachine.metricTimedOut({ period, statistic: cloudwatch.Stats.SUM }),
      'executions timed out: their events were not applied.',
    ),
    ...functions.flatMap((fn) => [
      alarm(
        `${fn.node.id}ErrorsAlarm`,
        fn.metricErrors({ period, statistic: cloudwatch.Stats.SUM }),
        `${fn.node.id} failed (Lambda errors).`,
      ),
      alarm(
        `${fn.node.id}ThrottlesAlarm`,
        fn.metricThrottles({ period, statistic: cloudwatch.Stats.SUM }),
        `${fn.node.id} was throttled.`,
      ),
    ]),
  ];
}

/** The dashboard's graphs, by row: executions, entity events and queues; then per-function errors, throttles, duration. */
function lifecycleGraphs(props: LifecycleDashboardProps, period: Duration): cloudwatch.IWidget[][] {
  const { lifecycle, config, stateMachine, functions } = props;
  const handlerMetric = (metricName: string) =>
    new cloudwatch.Metric({
      namespace: metricsNamespace(config),
      metricName,
      dimensionsMap: { service: lifecycle.name },
      period,
      statistic: cloudwatch.Stats.SUM,
      label: metricName,
    });
  const graph = (title: string, metrics: cloudwatch.IMetric[], width = 8) =>
    new cloudwatch.GraphWidget({ title, left: metrics, width, height: 6 });
  const perFunction = (metric: (fn: lambda.IFunction) => cloudwatch.Metric) =>
    functions.map((fn) => metric(fn).with({ label: fn.node.id }));
  return [
    [
      graph('Executions', [
        stateMachine.metricStarted({ period }),
        stateMachine.metricSucceeded({ period }),
        stateMachine.metricFailed({ period }),
        stateMachine.metricTimedOut({ period }),
      ]),
      graph(
        `${lifecycle.entity.name} events`,
        ['EventApplied', 'DuplicateEvent', 'VersionConflict'].map(handlerMetric),
      ),
      graph(
        'Dead-letter queues (messages visible)',
        props.queues.map((q) =>
          q.metricApproximateNumberOfMessagesVisible({
            period,
            statistic: cloudwatch.Stats.MAXIMUM,
            label: q.node.id,
          }),
        ),
      ),
    ],
    [
      graph(
        'Function errors',
        perFunction((fn) => fn.metricErrors({ period, statistic: cloudwatch.Stats.SUM })),
      ),
      graph(
        'Function throttles',
        perFunction((fn) => fn.metricThrottles({ period, statistic: cloudwatch.Stats.SUM })),
      ),
      graph(
        'Function duration p90 (ms)',
        perFunction((fn) => fn.metricDuration({ period, statistic: cloudwatch.Stats.p(90) })),
      ),
    ],
  ];
}
