import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as sns from 'aws-cdk-lib/aws-sns';
import type { Construct } from 'constructs';
import type { EnvConfig } from '../../project/config.ts';

/** The period every Stepwise alarm sums its metric over. */
export const ALARM_PERIOD = Duration.minutes(5);

export interface CountAlarmProps {
  readonly metric: cloudwatch.IMetric;
  readonly threshold: number;
  /** What went wrong and where to look, for the on-call engineer reading the notification. */
  readonly description: string;
  /** Notified when the alarm fires. @default nobody */
  readonly topic?: sns.ITopic;
  /** @default 1 */
  readonly evaluationPeriods?: number;
}

/** An alarm raised when a count reaches `threshold` (no data is no breach), notifying `topic` when there is one. */
export function countAlarm(scope: Construct, id: string, props: CountAlarmProps): cloudwatch.Alarm {
  const alarm = new cloudwatch.Alarm(scope, id, {
    metric: props.metric,
    threshold: props.threshold,
    evaluationPeriods: props.evaluationPeriods ?? 1,
    comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    alarmDescription: props.description,
  });
  if (props.topic) alarm.addAlarmAction(new SnsAction(props.topic));
  return alarm;
}

/** The errors and the throttles alarms of one function. */
export interface FunctionAlarms {
  readonly errors: cloudwatch.Alarm;
  readonly throttles: cloudwatch.Alarm;
}

/**
 * Alarms on a function's `Errors` and `Throttles` (sums per 5 minutes, thresholds from
 * `config.alarms`), created beside the function with ids `<id>ErrorsAlarm` and `<id>ThrottlesAlarm`.
 * @param what Names the function in the notification (`support-desk step 01-understand`).
 */
export function functionAlarms(
  scope: Construct,
  id: string,
  fn: lambda.IFunction,
  config: EnvConfig,
  what: string,
  topic?: sns.ITopic,
): FunctionAlarms {
  const { functionErrorsThreshold, throttlesThreshold, evaluationPeriods } = config.alarms;
  return {
    errors: countAlarm(scope, `${id}ErrorsAlarm`, {
      metric: fn.metricErrors({ period: ALARM_PERIOD, statistic: cloudwatch.Stats.SUM }),
      threshold: functionErrorsThreshold,
      evaluationPeriods,
      description: `${what} (${config.name}): the function failed - see its log group for the error.`,
      topic,
    }),
    throttles: countAlarm(scope, `${id}ThrottlesAlarm`, {
      metric: fn.metricThrottles({ period: ALARM_PERIOD, statistic: cloudwatch.Stats.SUM }),
      threshold: throttlesThreshold,
      evaluationPeriods,
      description: `${what} (${config.name}): invocations were throttled - the account's or the function's concurrency is exhausted.`,
      topic,
    }),
  };
}
