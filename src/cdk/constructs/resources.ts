import { Duration, type Stack } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as sns from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import type { Construct } from 'constructs';
import type { EnvConfig } from '../../project/config.ts';

/**
 * A project table: string keys `pk`/`sk`, on-demand, point-in-time recovery, AWS-managed
 * encryption, the environment's removal policy.
 */
export function stepwiseTable(
  scope: Construct,
  id: string,
  config: EnvConfig,
  props: Pick<dynamodb.TableProps, 'timeToLiveAttribute' | 'stream'> = {},
): dynamodb.Table {
  return new dynamodb.Table(scope, id, {
    partitionKey: { name: 'pk', type: dynamodb.AttributeType.STRING },
    sortKey: { name: 'sk', type: dynamodb.AttributeType.STRING },
    billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
    pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
    encryption: dynamodb.TableEncryption.AWS_MANAGED,
    removalPolicy: config.removalPolicy,
    ...props,
  });
}

/**
 * The topic a stack's alarms notify: the environment's own (`config.alarms.topicArn`), or one of
 * the stack's with the alarm email subscribed (`config.alarms.email`); none when neither is set.
 * An encrypted topic needs a customer-managed key: CloudWatch cannot use the AWS-managed SNS key.
 */
export function alarmTopic(stack: Stack, config: EnvConfig): sns.ITopic | undefined {
  if (config.alarms.topicArn) return sns.Topic.fromTopicArn(stack, 'AlarmTopic', config.alarms.topicArn);
  if (!config.alarms.email) return undefined;
  const key = new kms.Key(stack, 'AlarmTopicKey', {
    description: `Encrypts the Stepwise alarm topic of ${stack.stackName}`,
    enableKeyRotation: true,
    removalPolicy: config.removalPolicy,
  });
  key.grant(new iam.ServicePrincipal('cloudwatch.amazonaws.com'), 'kms:Decrypt', 'kms:GenerateDataKey*');
  const topic = new sns.Topic(stack, 'AlarmTopic', { masterKey: key, enforceSSL: true });
  topic.addSubscription(new EmailSubscription(config.alarms.email));
  return topic;
}

/** The environment's alarm on a state machine's failed executions (5-minute sums), notifying `topic` when given. */
export function failedExecutionsAlarm(
  scope: Construct,
  stateMachine: sfn.IStateMachine,
  config: EnvConfig,
  description: string,
  topic?: sns.ITopic,
): cloudwatch.Alarm {
  const alarm = new cloudwatch.Alarm(scope, 'ExecutionsFailedAlarm', {
    metric: stateMachine.metricFailed({ period: Duration.minutes(5), statistic: cloudwatch.Stats.SUM }),
    threshold: config.alarms.failedExecutionsThreshold,
    evaluationPeriods: config.alarms.evaluationPeriods,
    comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    alarmDescription: description,
  });
  if (topic) alarm.addAlarmAction(new SnsAction(topic));
  return alarm;
}
