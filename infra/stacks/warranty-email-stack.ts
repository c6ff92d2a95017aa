import { Stack, type StackProps } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as sns from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type { Construct } from 'constructs';
import { DefinitionError } from '../../lambdas/lib/errors.ts';
import { loadWorkflow } from '../../lambdas/lib/workflow/loader.ts';
import type { StepDefinition, WorkflowDefinition } from '../../lambdas/lib/workflow/schema.ts';
import type { EnvConfig } from '../config.ts';
import { AgentWorkflow } from '../constructs/agent-workflow.ts';
import { EmailIngress } from '../constructs/email-ingress.ts';
import type { StepwiseFunction } from '../constructs/stepwise-function.ts';

export interface WarrantyEmailStackProps extends StackProps {
  readonly config: EnvConfig;
  /** @default loadWorkflow('warranty-email') */
  readonly workflow?: WorkflowDefinition;
}

/**
 * A project table: string keys `pk`/`sk`, on-demand, point-in-time recovery, AWS-managed
 * encryption, the environment's removal policy.
 */
export function stepwiseTable(
  scope: Construct,
  id: string,
  config: EnvConfig,
  props: Pick<dynamodb.TableProps, 'timeToLiveAttribute'> = {},
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
 * The warranty-claim email agent: its tables and the compiled `warranty-email` workflow, each step
 * granted only what its declared tools need. Constructs that join later (the SES ingress) take
 * what they need from the public properties.
 */
export class WarrantyEmailStack extends Stack {
  readonly config: EnvConfig;
  /** Append-only event log (`EVENTS_TABLE`). */
  readonly eventsTable: dynamodb.Table;
  /** Repair tickets (`TICKETS_TABLE`). */
  readonly ticketsTable: dynamodb.Table;
  /** Warranty registry (`WARRANTY_TABLE`). */
  readonly warrantyTable: dynamodb.Table;
  /** Idempotency records of side-effecting tools (`IDEMPOTENCY_TABLE`), expired through the `expiresAt` TTL. */
  readonly idempotencyTable: dynamodb.Table;
  /** Inbound email bodies (`EMAILS_TABLE`); the state only carries a pointer. */
  readonly emailsTable: dynamodb.Table;
  /** Every alarm of this stack notifies it; only when the config names an alarm email. */
  readonly alarmTopic?: sns.Topic;
  readonly workflow: AgentWorkflow;
  /** SES inbound: raw mail bucket, receipt rule set and the ingress function that starts the workflow. */
  readonly ingress: EmailIngress;

  constructor(scope: Construct, id: string, props: WarrantyEmailStackProps) {
    const { config } = props;
    super(scope, id, { ...props, terminationProtection: props.terminationProtection ?? config.terminationProtection });
    this.config = config;
    this.eventsTable = stepwiseTable(this, 'EventsTable', config);
    this.ticketsTable = stepwiseTable(this, 'TicketsTable', config);
    this.warrantyTable = stepwiseTable(this, 'WarrantyTable', config);
    this.idempotencyTable = stepwiseTable(this, 'IdempotencyTable', config, { timeToLiveAttribute: 'expiresAt' });
    this.emailsTable = stepwiseTable(this, 'EmailsTable', config);
    if (config.alarms.email) this.alarmTopic = this.createAlarmTopic(config.alarms.email);

    this.workflow = new AgentWorkflow(this, 'Workflow', {
      workflow: props.workflow ?? loadWorkflow('warranty-email'),
      config,
      alarmTopic: this.alarmTopic,
      bindStep: (step, fn) => this.bindStep(step, fn),
    });
    this.ingress = new EmailIngress(this, 'EmailIngress', {
      config,
      stateMachine: this.workflow.stateMachine,
      emailsTable: this.emailsTable,
      eventsTable: this.eventsTable,
      alarmTopic: this.alarmTopic,
    });
  }

  /**
   * Every step appends events (and queries its execution's events for the final summary), records
   * idempotency keys and reads the email; tools add their own grants.
   */
  private bindStep(step: StepDefinition, fn: StepwiseFunction): void {
    this.eventsTable.grant(fn, 'dynamodb:Query');
    fn.bindTable(this.eventsTable, 'write', 'EVENTS_TABLE')
      .bindTable(this.idempotencyTable, 'readWrite', 'IDEMPOTENCY_TABLE')
      .bindTable(this.emailsTable, 'read', 'EMAILS_TABLE');
    const toolGrants: Record<string, () => void> = {
      check_warranty: () => fn.bindTable(this.warrantyTable, 'read', 'WARRANTY_TABLE'),
      create_ticket: () => fn.bindTable(this.ticketsTable, 'write', 'TICKETS_TABLE'),
      send_email: () => fn.bindEmailSender(this.config.email.mailFrom),
    };
    step.tools.forEach((tool, i) => {
      const grant = toolGrants[tool];
      if (!grant) throw new DefinitionError(step.file, `tools.${i}`, `no IAM grant for tool "${tool}" in WarrantyEmailStack`);
      grant();
    });
  }

  private createAlarmTopic(email: string): sns.Topic {
    // An encrypted topic needs a customer-managed key: CloudWatch cannot use the AWS-managed SNS key.
    const key = new kms.Key(this, 'AlarmTopicKey', {
      description: 'Encrypts the Stepwise alarm topic',
      enableKeyRotation: true,
      removalPolicy: this.config.removalPolicy,
    });
    key.grant(new iam.ServicePrincipal('cloudwatch.amazonaws.com'), 'kms:Decrypt', 'kms:GenerateDataKey*');
    const topic = new sns.Topic(this, 'AlarmTopic', { masterKey: key, enforceSSL: true });
    topic.addSubscription(new EmailSubscription(email));
    return topic;
  }
}
