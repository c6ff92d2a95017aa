import { CfnOutput, Duration, Stack, type StackProps, Validations } from 'aws-cdk-lib';
import type * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import type * as sns from 'aws-cdk-lib/aws-sns';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import type { Manifest, StepDefinition } from '../../definitions/workflow/schema.ts';
import { type EnvConfig, emailSettings } from '../../project/config.ts';
import type { WorkflowPlugin } from '../../runtime/plugin.ts';
import { replyBus } from '../../runtime/triggers/email/reply-event.ts';
import { AgentWorkflow } from '../constructs/agent-workflow.ts';
import { ALARM_PERIOD, countAlarm } from '../constructs/alarms.ts';
import { EmailIngress } from '../constructs/email-ingress.ts';
import { alarmTopic, stepwiseTable } from '../constructs/resources.ts';
import { SinglePromptAgent } from '../constructs/single-prompt.ts';
import type { StepwiseFunction } from '../constructs/stepwise-function.ts';
import { WorkflowDashboard } from '../constructs/workflow-dashboard.ts';
import { pascalCase, workflowStackName, workflowStateMachineName } from '../names.ts';

/** A tool table's environment variable: `tickets` → `TICKETS_TABLE`. */
export const tableEnvName = (table: string): string => `${table.replace(/[-\s]/g, '_').toUpperCase()}_TABLE`;
/** A tool bus's environment variable: `orders` → `ORDERS_BUS`. */
export const busEnvName = (bus: string): string => `${bus.replace(/[^A-Za-z0-9]/g, '_').toUpperCase()}_BUS`;

/** A manifest trigger of type `eventbridge`: a rule on its bus. */
type EventBridgeTrigger = Extract<Manifest['triggers'][number], { type: 'eventbridge' }>;

export interface WorkflowStackProps extends StackProps {
  readonly config: EnvConfig;
  /** The workflow and its code (`loadPlugin(name)`). */
  readonly plugin: WorkflowPlugin;
}

/**
 * One workflow, deployed: the compiled state machine (one Lambda and role per step), the event log,
 * the tables its tools declare, the idempotency table when a tool has side effects, and its
 * triggers (`email`: SES receipt rule, mail bucket, ingress and emails table; `eventbridge`: a rule
 * per trigger on its bus; `api`: the state machine ARN as an output). Each step's role gets exactly
 * what the tools on its allow-list declare.
 */
export class WorkflowStack extends Stack {
  readonly config: EnvConfig;
  /** Append-only event log (`EVENTS_TABLE`). */
  readonly eventsTable: dynamodb.Table;
  /** The tables the workflow's tools declare, by the name they use (`tickets`). */
  readonly tables: Readonly<Record<string, dynamodb.Table>>;
  /** Idempotency records of side-effecting tools (`IDEMPOTENCY_TABLE`), expired through the `expiresAt` TTL; only when a tool has side effects. */
  readonly idempotencyTable?: dynamodb.Table;
  /** Email workflows: inbound bodies (`EMAILS_TABLE`); the state only carries a pointer. */
  readonly emailsTable?: dynamodb.Table;
  /** Every alarm of this stack notifies it; only when the config names an alarm email or topic. */
  readonly alarmTopic?: sns.ITopic;
  readonly workflow: AgentWorkflow;
  /** Email workflows with manifest `singlePrompt`: the single-prompt agent, the mode parameter and its rollback. */
  readonly singlePrompt?: SinglePromptAgent;
  /** Email workflows: SES inbound, the raw mail bucket and the ingress function that starts the workflow. */
  readonly ingress?: EmailIngress;
  /** One rule per `eventbridge` trigger. */
  readonly rules: readonly events.Rule[];
  /** Steps run, failures, hand-offs, duration and tokens per step, from the step handler's metrics. */
  readonly dashboard: cloudwatch.Dashboard;

  constructor(scope: Construct, id: string, props: WorkflowStackProps) {
    const { config, plugin } = props;
    super(scope, id, { ...props, terminationProtection: props.terminationProtection ?? config.terminationProtection });
    this.config = config;
    const { manifest } = plugin.def;
    const tools = Object.values(plugin.tools);
    this.eventsTable = stepwiseTable(this, 'EventsTable', config);
    const tableNames = [...new Set(tools.flatMap((t) => Object.keys(t.resources?.tables ?? {})))].sort();
    this.tables = Object.fromEntries(
      tableNames.map((name) => [name, stepwiseTable(this, `${pascalCase(name)}Table`, config)]),
    );
    if (tools.some((t) => t.idempotency))
      this.idempotencyTable = stepwiseTable(this, 'IdempotencyTable', config, { timeToLiveAttribute: 'expiresAt' });
    const triggers = manifest.triggers;
    if (triggers.some((t) => t.type === 'email')) this.emailsTable = stepwiseTable(this, 'EmailsTable', config);
    this.alarmTopic = alarmTopic(this, config);

    this.workflow = new AgentWorkflow(this, 'Workflow', {
      plugin,
      config,
      alarmTopic: this.alarmTopic,
      bindStep: (step, fn) => this.bindStep(plugin, step, fn),
      childStateMachineName: (child) => workflowStateMachineName(workflowStackName(child, config.name), child),
    });
    const stateMachine = this.workflow.stateMachine;
    this.dashboard = new WorkflowDashboard(this, 'Dashboard', { workflow: plugin.def, config, stateMachine }).dashboard;
    if (this.emailsTable && manifest.singlePrompt) {
      this.singlePrompt = new SinglePromptAgent(this, 'SinglePrompt', {
        plugin,
        config,
        stepWorkflow: stateMachine,
        alarmTopic: this.alarmTopic,
        bindStep: (step, fn) => this.bindStep(plugin, step, fn),
      });
    }
    if (this.emailsTable) {
      this.ingress = new EmailIngress(this, 'EmailIngress', {
        ...(this.singlePrompt && {
          singlePrompt: { stateMachine: this.singlePrompt.stateMachine, parameter: this.singlePrompt.parameter },
        }),
        config,
        stateMachine,
        workflowName: manifest.name,
        emailsTable: this.emailsTable,
        eventsTable: this.eventsTable,
        alarmTopic: this.alarmTopic,
        replyBus: replyBus(plugin.def),
      });
    }
    this.rules = triggers.flatMap((trigger, i) =>
      trigger.type === 'eventbridge' ? [this.triggerRule(trigger, i, manifest.name)] : [],
    );
    this.addOutputs(manifest.name);
  }

  /**
   * The rule of `eventbridge` trigger `i`: matching events start an execution with their detail as input; those it
   * could not start go to the trigger's dead-letter queue, whose depth alarms.
   */
  private triggerRule(trigger: EventBridgeTrigger, i: number, workflowName: string): events.Rule {
    const bus = events.EventBus.fromEventBusName(this, `Bus${i}`, trigger.bus);
    const deadLetterQueue = new sqs.Queue(this, `Trigger${i}DeadLetters`, {
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });
    Validations.of(deadLetterQueue).acknowledge({
      id: 'AwsSolutions-SQS3',
      reason:
        'This queue is itself the dead-letter queue of the trigger rule: events EventBridge could not start an execution for.',
    });
    countAlarm(this, `Trigger${i}DeadLettersAlarm`, {
      metric: deadLetterQueue.metricApproximateNumberOfMessagesVisible({ period: ALARM_PERIOD, statistic: 'Maximum' }),
      threshold: 1,
      description: `${workflowName} (${this.config.name}): events matched trigger ${i} but could not start an execution: see ${deadLetterQueue.node.path}.`,
      topic: this.alarmTopic,
    });
    const rule = new events.Rule(this, `Trigger${i}`, {
      eventBus: bus,
      eventPattern: trigger.pattern as events.EventPattern,
      description: `Starts ${workflowName} with the event's detail as input`,
    });
    rule.addTarget(
      new targets.SfnStateMachine(this.workflow.stateMachine, {
        input: events.RuleTargetInput.fromEventPath('$.detail'),
        deadLetterQueue,
      }),
    );
    return rule;
  }

  /** The state machine's ARN, and the resume policy's when a step pauses: what callers outside the stack need. */
  private addOutputs(workflowName: string): void {
    if (this.workflow.resumePolicy) {
      new CfnOutput(this, 'ResumeCheckpointsPolicyArn', {
        description: `${workflowName}: attach to whoever resumes checkpoints (aws stepfunctions send-task-success --task-token ...)`,
        value: this.workflow.resumePolicy.managedPolicyArn,
      });
    }
    new CfnOutput(this, 'StateMachineArn', {
      description: `${workflowName}: aws stepfunctions start-execution --state-machine-arn <this> --input file://input.json`,
      value: this.workflow.stateMachine.stateMachineArn,
    });
  }

  /**
   * Every step appends to the event log (and reads its execution's events for the final summary);
   * an LLM step that reads the untrusted input of an email workflow may read the stored bodies;
   * the rest comes from the tools on the step's allow-list.
   */
  private bindStep(plugin: WorkflowPlugin, step: StepDefinition, fn: StepwiseFunction): void {
    // Append-only: PutItem with a condition, never Update or Delete.
    this.eventsTable.grant(fn, 'dynamodb:PutItem', 'dynamodb:Query');
    fn.addEnvironment('EVENTS_TABLE', this.eventsTable.tableName);
    if (this.emailsTable && step.kind === 'llm' && step.readsUntrusted) {
      this.emailsTable.grant(fn, 'dynamodb:GetItem');
      fn.addEnvironment('EMAILS_TABLE', this.emailsTable.tableName);
    }
    for (const name of step.tools) {
      const tool = plugin.tools[name]!;
      for (const [table, access] of Object.entries(tool.resources?.tables ?? {}))
        fn.bindTable(this.tables[table]!, access, tableEnvName(table));
      if (tool.resources?.sendEmail)
        fn.bindEmailSender(
          emailSettings(this.config, `tool ${name} of ${plugin.def.manifest.name} (it sends mail)`).mailFrom,
        );
      for (const bus of tool.resources?.buses ?? []) {
        const target = events.EventBus.fromEventBusName(fn, `Bus-${bus}`, bus);
        target.grantPutEventsTo(fn);
        fn.addEnvironment(busEnvName(bus), bus);
      }
      if (tool.idempotency) fn.bindTable(this.idempotencyTable!, 'readWrite', 'IDEMPOTENCY_TABLE');
      if (tool.resources?.embeddings) {
        const { provider, modelId } = this.config.embeddings;
        fn.addEnvironment('EMBEDDINGS_PROVIDER', provider);
        fn.addEnvironment('EMBEDDINGS_MODEL_ID', modelId);
        if (provider === 'bedrock') fn.grantInvokeModel(modelId);
      }
    }
  }
}
