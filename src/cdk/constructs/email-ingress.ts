import { type CfnElement, CfnOutput, Duration, Stack, Validations } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import * as events from 'aws-cdk-lib/aws-events';
import * as iam from 'aws-cdk-lib/aws-iam';
import { SqsDestination } from 'aws-cdk-lib/aws-lambda-destinations';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as ses from 'aws-cdk-lib/aws-ses';
import * as actions from 'aws-cdk-lib/aws-ses-actions';
import type * as sns from 'aws-cdk-lib/aws-sns';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import type * as ssm from 'aws-cdk-lib/aws-ssm';
import type * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import * as cxapi from 'aws-cdk-lib/cx-api';
import { Construct } from 'constructs';
import { type EnvConfig, emailSettings } from '../../project/config.ts';
import { EMAIL_INGRESS_ENTRY } from '../names.ts';
import { ALARM_PERIOD, countAlarm, type FunctionAlarms, functionAlarms } from './alarms.ts';
import { metricsNamespace, StepwiseFunction } from './stepwise-function.ts';

/** The ingress function's `service` (logs, traces and the metrics' dimension). */
const INGRESS_SERVICE = 'stepwise-ingress';

/** Key prefix of the raw MIME objects; the ingress reads `<prefix><SES message id>`. */
export const INBOUND_PREFIX = 'inbound/';

export interface EmailIngressProps {
  /** Recipients, reply address and size limit come from `config.email`. */
  readonly config: EnvConfig;
  /** The workflow an accepted mail starts; the ingress may start executions of this state machine only. */
  readonly stateMachine: sfn.IStateMachine;
  /** The workflow's name, for the function's description. */
  readonly workflowName: string;
  /** Where accepted bodies are stored (`EMAILS_TABLE`, write only). */
  readonly emailsTable: ITable;
  /** Where ingress decisions are recorded (`EVENTS_TABLE`, write only). */
  readonly eventsTable: ITable;
  /** Notified when a delivery could not be processed. @default the alarm notifies nobody */
  readonly alarmTopic?: sns.ITopic;
  /**
   * With a single-prompt agent deployed beside the workflow: where mail may go instead, as the parameter says.
   * @default the step workflow only
   */
  readonly singlePrompt?: { readonly stateMachine: sfn.IStateMachine; readonly parameter: ssm.IStringParameter };
  /** How long the raw MIME is kept. @default Duration.days(30) */
  readonly rawMailRetention?: Duration;
  /**
   * The bus the workflow's `Email Reply` events go on, when an event step waits for the customer's reply: the
   * function may then put events on that bus and read the threads of the emails table.
   * @default replies start executions like any mail
   */
  readonly replyBus?: string;
}

/**
 * SES inbound for an email workflow: a receipt rule for the configured recipients that stores
 * the raw MIME in an encrypted bucket (S3 action, prefix `inbound/`, spam and virus scanning on)
 * and then invokes the ingress function asynchronously (Lambda action). The function screens the
 * mail and starts the workflow; deliveries it fails on after Lambda's retries land in an
 * encrypted SQS queue with an alarm on it.
 *
 * Only one receipt rule set is active per account and region, and CloudFormation cannot activate
 * one: after the first deploy run the command in the `ActivateReceiptRuleSet` output.
 */
export class EmailIngress extends Construct {
  readonly bucket: s3.Bucket;
  readonly ruleSet: ses.ReceiptRuleSet;
  readonly function: StepwiseFunction;
  /** The ingress function's on-failure destination. */
  readonly failedDeliveries: sqs.Queue;
  readonly failedDeliveriesAlarm: cloudwatch.Alarm;
  /**
   * With the stricter sender policy: raised when mail is held for a person (`unauthenticated_sender`), so someone reads
   * it.
   */
  readonly heldMailAlarm?: cloudwatch.Alarm;
  /** Errors and throttles of the ingress function. */
  readonly functionAlarms: FunctionAlarms;
  /**
   * Raised when mail is refused unread (too large, over the MIME budget, unparseable): no reply went out and nobody
   * read it.
   */
  readonly unreadMailAlarm: cloudwatch.Alarm;
  /** With `email.accessLogs`: where S3 writes the raw-mail bucket's server access logs. */
  readonly accessLogsBucket?: s3.Bucket;

  constructor(scope: Construct, id: string, props: EmailIngressProps) {
    super(scope, id);
    const { config, alarmTopic: topic } = props;
    const email = emailSettings(config, `workflow ${props.workflowName} (it has an email trigger)`);
    // Access logs are delivered under a bucket policy (logging.s3.amazonaws.com, this bucket only), not
    // the legacy log-delivery ACL, which buckets with ACLs disabled (BUCKET_OWNER_ENFORCED) refuse.
    this.node.setContext(cxapi.S3_SERVER_ACCESS_LOGS_USE_BUCKET_POLICY, true);

    if (email.accessLogs) this.accessLogsBucket = this.createAccessLogsBucket(config);
    this.bucket = this.createRawMailBucket(config, props.rawMailRetention);
    this.function = this.createFunction(props, email);
    this.grantIngress(props);
    this.failedDeliveries = this.createFailedDeliveries();

    this.failedDeliveriesAlarm = countAlarm(this, 'FailedDeliveriesAlarm', {
      metric: this.failedDeliveries.metricApproximateNumberOfMessagesVisible({
        period: Duration.minutes(5),
        statistic: 'Maximum',
      }),
      threshold: 1,
      description: `Inbound mail (${config.name}) could not be processed: see the FailedDeliveries queue.`,
      topic,
    });
    if (email.requireAuthenticatedSender) this.heldMailAlarm = this.createHeldMailAlarm(config, topic);
    const what = `Inbound mail for ${props.workflowName}`;
    this.functionAlarms = functionAlarms(this, 'Function', this.function, config, what, topic);
    this.unreadMailAlarm = this.createUnreadMailAlarm(config, topic);

    this.ruleSet = this.createRuleSet(email.recipients);
  }

  /** Where S3 writes the raw-mail bucket's access logs (SSE-S3: S3 cannot deliver them into a KMS-encrypted bucket). */
  private createAccessLogsBucket(config: EnvConfig): s3.Bucket {
    const bucket = new s3.Bucket(this, 'RawMailAccessLogs', {
      encryption: s3.BucketEncryption.S3_MANAGED,
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
      enforceSSL: true,
      lifecycleRules: [{ expiration: Duration.days(365) }],
      removalPolicy: config.removalPolicy,
    });
    Validations.of(bucket).acknowledge({
      id: 'AwsSolutions-S1',
      reason:
        'This bucket receives the access logs of the raw-mail bucket; logging its own access would log the log deliveries.',
    });
    return bucket;
  }

  /** The encrypted bucket SES stores the raw MIME in, under `inbound/`, expired after `retention`. */
  private createRawMailBucket(config: EnvConfig, retention = Duration.days(30)): s3.Bucket {
    const bucket = new s3.Bucket(this, 'RawMail', {
      encryption: s3.BucketEncryption.S3_MANAGED,
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
      enforceSSL: true,
      lifecycleRules: [{ prefix: INBOUND_PREFIX, expiration: retention }],
      removalPolicy: config.removalPolicy,
      ...(this.accessLogsBucket && {
        serverAccessLogsBucket: this.accessLogsBucket,
        serverAccessLogsPrefix: 'raw-mail/',
      }),
    });
    if (!this.accessLogsBucket)
      Validations.of(bucket).acknowledge({
        id: 'AwsSolutions-S1',
        reason:
          'Only SES writes and only the ingress function reads this bucket; every delivery is recorded in the event log (access logs: email.accessLogs, on in prod).',
      });
    return bucket;
  }

  /** The ingress function: it reads the stored MIME, screens the mail and starts the workflow. */
  private createFunction(props: EmailIngressProps, email: NonNullable<EnvConfig['email']>): StepwiseFunction {
    return new StepwiseFunction(this, 'Function', {
      entry: EMAIL_INGRESS_ENTRY,
      config: props.config,
      serviceName: INGRESS_SERVICE,
      description: `Stepwise SES ingress: screens inbound mail and starts ${props.workflowName}`,
      timeout: Duration.seconds(60),
      environment: {
        EMAIL_BUCKET: this.bucket.bucketName,
        EMAIL_KEY_PREFIX: INBOUND_PREFIX,
        STATE_MACHINE_ARN: props.stateMachine.stateMachineArn,
        // Only to recognise our own mail: this function has no permission to send.
        MAIL_FROM: email.mailFrom,
        MAX_MESSAGE_BYTES: String(email.maxEmailBytes),
        REQUIRE_AUTHENTICATED_SENDER: String(email.requireAuthenticatedSender),
      },
    });
  }

  /** Let the ingress function put into the two tables, read the stored mail and start the workflow (or the agent). */
  private grantIngress(props: EmailIngressProps): void {
    // Conditional puts only: the ingress never updates or deletes a stored body or an event.
    for (const [table, env] of [
      [props.emailsTable, 'EMAILS_TABLE'],
      [props.eventsTable, 'EVENTS_TABLE'],
    ] as const) {
      table.grant(this.function, 'dynamodb:PutItem');
      this.function.addEnvironment(env, table.tableName);
    }
    // GetObject only (grantRead would add List*/GetBucket*): the function reads one known key per delivery.
    iam.Grant.addToPrincipal({
      grantee: this.function,
      actions: ['s3:GetObject'],
      resourceArns: [this.bucket.arnForObjects(`${INBOUND_PREFIX}*`)],
    });
    const bucketLogicalId = Stack.of(this).getLogicalId(this.bucket.node.defaultChild as CfnElement);
    Validations.of(this.function.role!).acknowledge({
      id: `AwsSolutions-IAM5[Resource::<${bucketLogicalId}.Arn>/${INBOUND_PREFIX}*]`,
      reason:
        'Object keys are SES message ids, known only when a mail arrives; the grant is GetObject under the inbound/ prefix only.',
    });
    props.stateMachine.grantStartExecution(this.function);
    if (props.replyBus) this.grantReplies(props.replyBus, props.emailsTable);
    if (props.singlePrompt) {
      props.singlePrompt.stateMachine.grantStartExecution(this.function);
      props.singlePrompt.parameter.grantRead(this.function);
      this.function.addEnvironment('SINGLE_PROMPT_STATE_MACHINE_ARN', props.singlePrompt.stateMachine.stateMachineArn);
      this.function.addEnvironment('ORCHESTRATION_PARAMETER', props.singlePrompt.parameter.parameterName);
    }
  }

  /**
   * Let the function turn replies into events: PutEvents on the reply bus only, and Query on the
   * emails table for thread items only (the leading-key condition keeps bodies and claims unread).
   */
  private grantReplies(busName: string, emailsTable: ITable): void {
    events.EventBus.fromEventBusName(this, 'ReplyBus', busName).grantPutEventsTo(this.function);
    this.function.addEnvironment('REPLY_EVENT_BUS', busName);
    this.function.addToRolePolicy(
      new iam.PolicyStatement({
        actions: ['dynamodb:Query'],
        resources: [emailsTable.tableArn],
        conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['THREAD#*'] } },
      }),
    );
  }

  /** The encrypted queue the function's asynchronous invocations land in when they fail after Lambda's retries. */
  private createFailedDeliveries(): sqs.Queue {
    const queue = new sqs.Queue(this, 'FailedDeliveries', {
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });
    Validations.of(queue).acknowledge({
      id: 'AwsSolutions-SQS3',
      reason: "This queue is itself the dead-letter destination of the ingress function's asynchronous invocations.",
    });
    this.function.configureAsyncInvoke({
      retryAttempts: 2,
      maxEventAge: Duration.hours(6),
      onFailure: new SqsDestination(queue),
    });
    return queue;
  }

  /** Raised on mail held for a person: the ingress emits EmailRejected with its reason as a dimension. */
  private createHeldMailAlarm(config: EnvConfig, topic?: sns.ITopic): cloudwatch.Alarm {
    return countAlarm(this, 'HeldMailAlarm', {
      metric: new cloudwatch.Metric({
        namespace: metricsNamespace(config),
        metricName: 'EmailRejected',
        dimensionsMap: { service: INGRESS_SERVICE, reason: 'unauthenticated_sender' },
        period: Duration.minutes(5),
        statistic: cloudwatch.Stats.SUM,
      }),
      threshold: 1,
      description: `Inbound mail (${config.name}) from an unauthenticated sender was held for a person (IngressRejected unauthenticated_sender in the events table): nobody was answered.`,
      topic,
    });
  }

  /**
   * Raised on mail refused before anyone or any model read it: SES's size limit, the MIME budget,
   * unparseable MIME. The sender gets no reply, so a person looks at the IngressRejected records
   * (the reason is a dimension of EmailRejected).
   */
  private createUnreadMailAlarm(config: EnvConfig, topic?: sns.ITopic): cloudwatch.Alarm {
    const unread = ['too_large', 'mime_budget', 'malformed_mime', 'parse_budget'] as const;
    return countAlarm(this, 'UnreadMailAlarm', {
      metric: new cloudwatch.MathExpression({
        expression: unread.map((_, i) => `r${i}`).join(' + '),
        usingMetrics: Object.fromEntries(
          unread.map((reason, i) => [
            `r${i}`,
            new cloudwatch.Metric({
              namespace: metricsNamespace(config),
              metricName: 'EmailRejected',
              dimensionsMap: { service: INGRESS_SERVICE, reason },
              statistic: cloudwatch.Stats.SUM,
            }),
          ]),
        ),
        period: ALARM_PERIOD,
        label: `EmailRejected (${unread.join(', ')})`,
      }),
      threshold: 1,
      description: `Inbound mail (${config.name}) was refused unread (${unread.join(', ')}): the sender got no reply; the IngressRejected records in the events table say which mail and why.`,
      topic,
    });
  }

  /** The receipt rule set (store, then invoke the function) and the output with the command that activates it. */
  private createRuleSet(recipients: string[]): ses.ReceiptRuleSet {
    const ruleSet = new ses.ReceiptRuleSet(this, 'RuleSet', {
      rules: [
        {
          recipients,
          // Spam and virus verdicts exist only when scanning is on; the ingress refuses on them.
          scanEnabled: true,
          // Claims carry personal data: accept them over TLS only.
          tlsPolicy: ses.TlsPolicy.REQUIRE,
          actions: [
            new actions.S3({ bucket: this.bucket, objectKeyPrefix: INBOUND_PREFIX }),
            new actions.Lambda({ function: this.function, invocationType: actions.LambdaInvocationType.EVENT }),
          ],
        },
      ],
    });
    new CfnOutput(this, 'ActivateReceiptRuleSet', {
      description: 'SES receives with one active rule set per region, which CloudFormation cannot select',
      value: `aws ses set-active-receipt-rule-set --rule-set-name ${ruleSet.receiptRuleSetName}`,
    });
    return ruleSet;
  }
}
