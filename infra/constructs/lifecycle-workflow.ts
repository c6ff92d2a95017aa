import { dirname } from 'node:path';
import { Duration, Validations } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import type * as sns from 'aws-cdk-lib/aws-sns';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import * as tasks from 'aws-cdk-lib/aws-stepfunctions-tasks';
import { Construct } from 'constructs';
import { failedExecutionsAlarm } from './resources.ts';
import { VersionConflictError } from '../../lambdas/lib/errors.ts';
import type { AgentConfig } from '../../lambdas/lifecycle/conditions.ts';
import { LOG_ONLY, routeOf } from '../../lambdas/lifecycle/routes.ts';
import { LEAD_EVENT_TYPES, type LifecycleDefinition } from '../../lambdas/lifecycle/schema.ts';
import type { EnvConfig } from '../config.ts';
import { WORKFLOW_METADATA } from './agent-workflow.ts';
import { StepwiseFunction } from './stepwise-function.ts';

/** The handler modules of the lifecycle's Tasks. */
export const LIFECYCLE_ENTRIES = {
  loadLead: 'lambdas/lifecycle/handlers/load-lead.ts',
  applyEvent: 'lambdas/lifecycle/handlers/apply-event.ts',
  persist: 'lambdas/lifecycle/handlers/persist.ts',
} as const;

/** Names of the state machine's fixed states; transition Tasks are named by `routeOf` (lambdas/lifecycle/routes.ts). */
export const LIFECYCLE_STATES = {
  start: 'Start',
  loadLead: 'LoadLead',
  route: 'RouteEvent',
  persist: 'Persist',
  afterConflict: 'AfterConflict',
  retryConflict: 'RetryConflict',
  afterPersist: 'AfterPersist',
  done: 'Done',
  duplicate: 'Duplicate',
  deadLetter: 'DeadLetter',
  failed: 'EventFailed',
} as const;

/** The Choice that routes an event of `type` on the lead's state: no colon, so never a transition Task's name (`<state>: <event>`). */
export const eventRouteName = (type: string): string => `Route ${type}`;

export interface LifecycleWorkflowProps {
  /** The loaded statechart (`loadLifecycle()`); the routing Choice states are generated from `handlers`. */
  readonly lifecycle: LifecycleDefinition;
  /** The agent's goal and follow-up stop conditions (`AGENT_CONFIG` of the transition function). */
  readonly agentConfig: AgentConfig;
  readonly config: EnvConfig;
  /** The event store (`LEADS_TABLE`): read by `LoadLead`, written by `Persist`. */
  readonly leadsTable: ITable;
  /** Receives (as the SendMessage body) the state of every execution that could not apply its event. */
  readonly deadLetterQueue: sqs.IQueue;
  /** Re-reads after version conflicts before the event is dead-lettered. @default 10 */
  readonly maxConflictRetries?: number;
  /** Notified when the failed-executions alarm fires. @default the alarm notifies nobody */
  readonly alarmTopic?: sns.ITopic;
}

/**
 * A lifecycle statechart compiled to an Express state machine whose input is the EventBridge
 * event (lambdas/lifecycle/envelope.ts):
 *
 * `Start` → `LoadLead` (envelope → event; snapshot; duplicate?) → `RouteEvent`, a Choice with the
 * duplicate check first, then one rule per handled event type to the Choice `Route <event>`, whose
 * rules — one per declaration: the leaves whose handler is declared there — go to the transition
 * Task `<declaring state>: <event>`; both Choices' Default is `LogOnly`. Two levels because each
 * condition tested is a JSONPath lookup: an event pays one per event type and one per leaf tested
 * before its own, not one per declaration before its own. The Task → `Persist` (one conditional
 * write; `VersionConflictError` → `AfterConflict` → `RetryConflict` → `LoadLead`, at most
 * `maxConflictRetries` times; the same write puts the `lead.state_changed` outbox item, which the
 * table's stream publishes) → `AfterPersist` → `Done`.
 * Whatever fails is caught to `DeadLetter` (SQS) → `EventFailed`.
 *
 * Three functions: `LoadLead` may read the table, `Persist` may write it, and the transition
 * function (every transition Task) has no access to anything: it is the pure `applyEvent`.
 *
 * @example
 * new LifecycleWorkflow(this, 'Lifecycle', { lifecycle: loadLifecycle(), agentConfig, config, leadsTable, eventBus, deadLetterQueue });
 */
export class LifecycleWorkflow extends Construct {
  readonly stateMachine: sfn.StateMachine;
  readonly functions: { readonly loadLead: StepwiseFunction; readonly applyEvent: StepwiseFunction; readonly persist: StepwiseFunction };
  /** Execution log group (level ALL, execution data included). */
  readonly logGroup: logs.LogGroup;
  readonly failedExecutionsAlarm: cloudwatch.Alarm;

  constructor(scope: Construct, id: string, props: LifecycleWorkflowProps) {
    super(scope, id);
    const { lifecycle, config } = props;
    const fn = (name: string, entry: string, description: string, environment: Record<string, string> = {}) =>
      new StepwiseFunction(this, name, {
        entry,
        config,
        serviceName: lifecycle.name,
        // The definition ships with the code: the Tasks and the Choice states come from the same file.
        workflowDir: dirname(lifecycle.file),
        description: `${lifecycle.name}: ${description}`,
        timeout: Duration.seconds(10),
        environment: { LIFECYCLE: lifecycle.name, ...environment },
      });
    this.functions = {
      loadLead: fn('LoadLead', LIFECYCLE_ENTRIES.loadLead, 'reads a lead and checks the event id').bindTable(props.leadsTable, 'read', 'LEADS_TABLE'),
      applyEvent: fn('ApplyEvent', LIFECYCLE_ENTRIES.applyEvent, 'applies an event to a lead (pure)', { AGENT_CONFIG: JSON.stringify(props.agentConfig) }),
      persist: fn('Persist', LIFECYCLE_ENTRIES.persist, 'appends events and the lead snapshot in one write').bindTable(props.leadsTable, 'write', 'LEADS_TABLE'),
    };

    this.logGroup = new logs.LogGroup(this, 'ExecutionLogs', { retention: config.logRetention, removalPolicy: config.removalPolicy });
    this.stateMachine = new sfn.StateMachine(this, 'StateMachine', {
      definitionBody: sfn.DefinitionBody.fromChainable(this.compile(new Construct(this, 'States'), props)),
      stateMachineType: sfn.StateMachineType.EXPRESS,
      tracingEnabled: true,
      logs: { destination: this.logGroup, level: sfn.LogLevel.ALL, includeExecutionData: config.executionDataInLogs },
    });
    (this.stateMachine.node.defaultChild as sfn.CfnStateMachine).addMetadata(WORKFLOW_METADATA, lifecycle.name);
    this.acknowledgeStateMachineRole();

    this.failedExecutionsAlarm = failedExecutionsAlarm(this, this.stateMachine, config, `${lifecycle.name} (${config.name}): lead events not applied - see the incoming dead-letter queue.`, props.alarmTopic);
  }

  private compile(scope: Construct, props: LifecycleWorkflowProps): sfn.IChainable {
    const { lifecycle } = props;
    const S = LIFECYCLE_STATES;
    const done = new sfn.Succeed(scope, S.done);
    const duplicate = new sfn.Succeed(scope, S.duplicate, { comment: 'The event id is already in the lead log: nothing was applied.' });
    const deadLetter = new tasks.SqsSendMessage(scope, S.deadLetter, {
      queue: props.deadLetterQueue,
      messageBody: sfn.TaskInput.fromJsonPathAt('$'),
      resultPath: sfn.JsonPath.DISCARD,
    }).next(new sfn.Fail(scope, S.failed, { error: S.failed, cause: 'The event was not applied; the execution state is in the dead-letter queue.' }));
    const catchAll = <T extends sfn.TaskStateBase>(task: T): T => {
      task.addCatch(deadLetter, { errors: [sfn.Errors.ALL], resultPath: '$.error' });
      return task;
    };

    const start = new sfn.Pass(scope, S.start, { parameters: { 'envelope.$': '$', attempt: 0 } });
    const loadLead = catchAll(
      new tasks.LambdaInvoke(scope, S.loadLead, {
        lambdaFunction: this.functions.loadLead,
        payloadResponseOnly: true,
        payload: sfn.TaskInput.fromObject({ envelope: sfn.JsonPath.objectAt('$.envelope'), attempt: sfn.JsonPath.numberAt('$.attempt') }),
        resultPath: '$.loaded',
      }),
    );

    const persist = new tasks.LambdaInvoke(scope, S.persist, {
      lambdaFunction: this.functions.persist,
      payloadResponseOnly: true,
      payload: sfn.TaskInput.fromObject({
        leadId: sfn.JsonPath.stringAt('$.loaded.event.leadId'),
        expectedEventCount: sfn.JsonPath.numberAt('$.loaded.lead.eventCount'),
        snapshot: sfn.JsonPath.objectAt('$.applied.snapshot'),
        events: sfn.JsonPath.listAt('$.applied.events'),
        stateChanged: sfn.JsonPath.objectAt('$.applied.stateChanged'),
        requestId: sfn.JsonPath.executionId,
      }),
      resultPath: '$.persisted',
    });
    // Someone else appended first: re-read and re-apply, a bounded number of times.
    const afterConflict = new sfn.Pass(scope, S.afterConflict, {
      parameters: {
        'envelope.$': '$.envelope',
        'attempt.$': 'States.MathAdd($.attempt, 1)',
        'error.$': '$.error',
      },
    });
    persist.addCatch(afterConflict, { errors: [VersionConflictError.name], resultPath: '$.error' });
    catchAll(persist);
    afterConflict.next(
      new sfn.Choice(scope, S.retryConflict)
        .when(sfn.Condition.numberLessThanEquals('$.attempt', props.maxConflictRetries ?? 10), loadLead)
        .otherwise(deadLetter),
    );

    // No publish here: Persist writes the change to the outbox in the same transaction, and the
    // table's stream publishes it, so a change can never be committed and lost.
    persist.next(new sfn.Choice(scope, S.afterPersist).when(sfn.Condition.stringEquals('$.persisted.status', 'DUPLICATE'), duplicate).otherwise(done));

    const logOnly = this.transitionTask(scope, LOG_ONLY, catchAll).next(persist);
    const route = new sfn.Choice(scope, S.route).when(sfn.Condition.booleanEquals('$.loaded.duplicate', true), duplicate).otherwise(logOnly);
    const byEvent = new Map<string, sfn.Choice>();
    for (const [name, rule] of transitionRules(lifecycle)) {
      let choice = byEvent.get(rule.event);
      if (!choice) {
        choice = new sfn.Choice(scope, eventRouteName(rule.event)).otherwise(logOnly);
        byEvent.set(rule.event, choice);
        route.when(sfn.Condition.stringEquals('$.loaded.event.type', rule.event), choice);
      }
      const byState = rule.leaves.map((leaf) => sfn.Condition.stringEquals('$.loaded.lead.state', leaf));
      choice.when(byState.length === 1 ? byState[0]! : sfn.Condition.or(...byState), this.transitionTask(scope, name, catchAll).next(persist));
    }

    return start.next(loadLead).next(route);
  }

  /** A Task that applies the event with the transition function; `route` is its own name, checked by the handler. */
  private transitionTask(scope: Construct, name: string, catchAll: <T extends sfn.TaskStateBase>(task: T) => T): tasks.LambdaInvoke {
    return catchAll(
      new tasks.LambdaInvoke(scope, name, {
        lambdaFunction: this.functions.applyEvent,
        payloadResponseOnly: true,
        payload: sfn.TaskInput.fromObject({
          route: name,
          event: sfn.JsonPath.objectAt('$.loaded.event'),
          lead: sfn.JsonPath.objectAt('$.loaded.lead'),
        }),
        resultPath: '$.applied',
      }),
    );
  }

  private acknowledgeStateMachineRole(): void {
    const role = Validations.of(this.stateMachine.role);
    role.acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason: 'CloudWatch Logs delivery (logs:*LogDelivery*) and X-Ray (PutTraceSegments) support no resource-level permissions.',
    });
    // LambdaInvoke also grants `<function arn>:*`: the function's versions and aliases.
    for (const fn of Object.values(this.functions)) {
      const logicalId = this.stateMachine.stack.getLogicalId(fn.node.defaultChild as lambda.CfnFunction);
      role.acknowledge({ id: `AwsSolutions-IAM5[Resource::<${logicalId}.Arn>:*]`, reason: 'lambda:InvokeFunction on the lifecycle function and its versions only.' });
    }
  }
}

/** One rule of the Choice `Route <event>`: an event type and the leaves whose handler for it is declared in the same place. */
export interface TransitionRule {
  event: string;
  leaves: string[];
}

/**
 * The Choice rules of a lifecycle, keyed by transition Task name (`routeOf`), in document order of
 * the leaves and vocabulary order of the events. Every (leaf, event) with a handler is in exactly
 * one rule; the others take the Default (`LogOnly`).
 */
export function transitionRules(lifecycle: LifecycleDefinition): Map<string, TransitionRule> {
  const rules = new Map<string, TransitionRule>();
  for (const event of LEAD_EVENT_TYPES) {
    for (const leaf of lifecycle.leaves) {
      const name = routeOf(lifecycle, leaf, event);
      if (name === LOG_ONLY) continue;
      const rule = rules.get(name);
      if (rule) rule.leaves.push(leaf);
      else rules.set(name, { event, leaves: [leaf] });
    }
  }
  return rules;
}
