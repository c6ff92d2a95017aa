/**
 * What the `event` steps of a workflow need deployed besides their states: the token table
 * (partition key `pk`, TTL `expiresAt`), the function their `.waitForTaskToken` Task invokes to
 * record its token, and, once the state machine exists, one EventBridge rule per awaited
 * source and detail-type targeting the resumer (src/runtime/triggers/event-wait/). The resumer
 * may read and delete in the token table and send task success or failure to this state machine,
 * nothing else.
 */
import { Duration } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import type { StepDefinition, WorkflowDefinition } from '../../definitions/workflow/schema.ts';
import type { EnvConfig } from '../../project/config.ts';
import type { WaitDeclaration } from '../../runtime/triggers/event-wait/waits.ts';
import { EVENT_REGISTER_ENTRY, EVENT_RESUMER_ENTRY } from '../names.ts';
import { StepwiseFunction } from './stepwise-function.ts';

export interface EventWaitsProps {
  readonly workflow: WorkflowDefinition;
  readonly config: EnvConfig;
}

/** The waits the resumer is told about (its `EVENT_WAITS`). */
export const waitDeclarations = (workflow: WorkflowDefinition): WaitDeclaration[] =>
  workflow.steps.flatMap((s: StepDefinition) =>
    s.event
      ? [
          {
            workflow: workflow.manifest.name,
            step: s.name,
            source: s.event.source,
            detailType: s.event.detailType,
            match: s.event.match,
          },
        ]
      : [],
  );

export class EventWaits extends Construct {
  readonly table: dynamodb.Table;
  /** The function the wait Tasks invoke: it writes the token table only. */
  readonly register: StepwiseFunction;
  resumer?: StepwiseFunction;

  constructor(
    scope: Construct,
    id: string,
    private readonly props: EventWaitsProps,
  ) {
    super(scope, id);
    const { config, workflow } = props;
    this.table = new dynamodb.Table(this, 'Tokens', {
      partitionKey: { name: 'pk', type: dynamodb.AttributeType.STRING },
      billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      encryption: dynamodb.TableEncryption.AWS_MANAGED,
      timeToLiveAttribute: 'expiresAt',
      removalPolicy: config.removalPolicy,
    });
    this.register = new StepwiseFunction(this, 'Register', {
      entry: EVENT_REGISTER_ENTRY,
      config,
      serviceName: workflow.manifest.name,
      description: `${workflow.manifest.name}: records the task token of an execution waiting for an outside event`,
      timeout: Duration.seconds(10),
    });
    this.register.bindTable(this.table, 'write', 'WAITS_TABLE');
  }

  /** The resumer and the rules that feed it, for the workflow's state machine. */
  addResumer(stateMachine: sfn.IStateMachine): StepwiseFunction {
    const { config, workflow } = this.props;
    const waits = waitDeclarations(workflow);
    const resumer = new StepwiseFunction(this, 'Resumer', {
      entry: EVENT_RESUMER_ENTRY,
      config,
      serviceName: workflow.manifest.name,
      description: `${workflow.manifest.name}: resumes the execution waiting for an arrived event`,
      timeout: Duration.seconds(30),
      environment: { EVENT_WAITS: JSON.stringify(waits) },
    });
    resumer.bindTable(this.table, 'readWrite', 'WAITS_TABLE');
    resumer.addToRolePolicy(
      new iam.PolicyStatement({
        actions: ['states:SendTaskSuccess', 'states:SendTaskFailure'],
        resources: [stateMachine.stateMachineArn],
      }),
    );
    const seen = new Set<string>();
    for (const step of workflow.steps) {
      const event = step.event;
      const id = event && `${event.bus}|${event.source}|${event.detailType}`;
      if (!event || seen.has(id!)) continue;
      seen.add(id!);
      new events.Rule(this, `Rule-${step.name}`, {
        description: `${workflow.manifest.name} ${step.name}: ${event.detailType} from ${event.source} resumes the waiting execution`,
        eventBus:
          event.bus === 'default' ? undefined : events.EventBus.fromEventBusName(this, `Bus-${step.name}`, event.bus),
        eventPattern: { source: [event.source], detailType: [event.detailType] },
        targets: [new targets.LambdaFunction(resumer, { retryAttempts: 4 })],
      });
    }
    this.resumer = resumer;
    return resumer;
  }
}
