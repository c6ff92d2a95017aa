import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as sns from 'aws-cdk-lib/aws-sns';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import type * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import type { LifecycleDefinition } from '../../definitions/lifecycle/schema.ts';
import type { EnvConfig } from '../../project/config.ts';
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
    const { lifecycle, config, stateMachine, functions } = props;
    const name = lifecycle.name;
    const period = props.period ?? Duration.minutes(5);
    const alarm = (alarmId: string, metric: cloudwatch.IMetric, what: string) => {
      const a = new cloudwatch.Alarm(this, alarmId, {
        metric,
        threshold: 1,
        evaluationPeriods: 1,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
        alarmDescription: `${name} (${config.name}): ${what}`,
      });
      if (props.alarmTopic) a.addAlarmAction(new SnsAction(props.alarmTopic));
      return a;
    };
    const nodeIdOf = (fn: lambda.IFunction) => fn.node.id;
    this.alarms = [
      alarm(
        'ExecutionsTimedOutAlarm',
        stateMachine.metricTimedOut({ period, statistic: cloudwatch.Stats.SUM }),
        'executions timed out: their events were not applied.',
      ),
      ...functions.flatMap((fn) => [
        alarm(
          `${nodeIdOf(fn)}ErrorsAlarm`,
          fn.metricErrors({ period, statistic: cloudwatch.Stats.SUM }),
          `${nodeIdOf(fn)} failed (Lambda errors).`,
        ),
        alarm(
          `${nodeIdOf(fn)}ThrottlesAlarm`,
          fn.metricThrottles({ period, statistic: cloudwatch.Stats.SUM }),
          `${nodeIdOf(fn)} was throttled.`,
        ),
      ]),
    ];

    const handlerMetric = (metricName: string) =>
      new cloudwatch.Metric({
        namespace: metricsNamespace(config),
        metricName,
        dimensionsMap: { service: name },
        period,
        statistic: cloudwatch.Stats.SUM,
        label: metricName,
      });
    const graph = (title: string, metrics: cloudwatch.IMetric[], width = 8) =>
      new cloudwatch.GraphWidget({ title, left: metrics, width, height: 6 });
    const perFunction = (metric: (fn: lambda.IFunction) => cloudwatch.Metric) =>
      functions.map((fn) => metric(fn).with({ label: nodeIdOf(fn) }));
    this.dashboard = new cloudwatch.Dashboard(this, 'Dashboard', {
      dashboardName: `stepwise-${name}-${config.name}`,
      defaultInterval: Duration.days(1),
      widgets: [
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
        [new cloudwatch.AlarmStatusWidget({ title: 'Alarms', alarms: [...this.alarms], width: 24, height: 4 })],
      ],
    });
  }
}
