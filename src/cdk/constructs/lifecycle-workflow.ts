import { dirname } from 'node:path';
import { Duration, Stack, Validations } from 'aws-cdk-lib';
import type * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import type * as sns from 'aws-cdk-lib/aws-sns';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import * as tasks from 'aws-cdk-lib/aws-stepfunctions-tasks';
import { Construct } from 'constructs';
import { EventTooLargeError, VersionConflictError } from '../../core/errors.ts';
import type { AgentConfig } from '../../definitions/lifecycle/agent-config.ts';
import { describeTransitions } from '../../definitions/lifecycle/routes.ts';
import type { LifecycleDefinition } from '../../definitions/lifecycle/schema.ts';
import type { EnvConfig } from '../../project/config.ts';
import { MAX_EVENT_BYTES } from '../../runtime/lifecycle/envelope.ts';
import { WORKFLOW_METADATA } from '../metadata.ts';
import { LIFECYCLE_STATES, STATE_MACHINE_NAME_MAX } from '../names.ts';
import { failedExecutionsAlarm } from './resources.ts';
import { StepwiseFunction } from './stepwise-function.ts';

/** The handler modules of the lifecycle's Tasks. */
export const LIFECYCLE_ENTRIES = {
  load: 'runtime/lifecycle/handlers/load-entity.ts',
  apply: 'runtime/lifecycle/handlers/apply-event.ts',
  persist: 'runtime/lifecycle/handlers/persist.ts',
} as const;

/** The first state: `Load lead` for the lead lifecycle. */
export const loadStateName = (def: LifecycleDefinition): string => `Load ${def.entity.name.replaceAll('_', ' ')}`;

/** Step Functions' limit on state machine names. */

/** `<stack name>-<lifecycle name>`, cut to the 80 characters Step Functions allows: what the console lists. */
export const lifecycleStateMachineName = (stackName: string, lifecycle: string): string =>
  `${stackName}-${lifecycle}`.slice(0, STATE_MACHINE_NAME_MAX);

export interface LifecycleWorkflowProps {
  /** The loaded statechart (`loadLifecycle(name)`); one transition Task per event type of its vocabulary. */
  readonly lifecycle: LifecycleDefinition;
  /** The agent's goal and follow-up stop conditions (`AGENT_CONFIG` of the transition function). */
  readonly agentConfig: AgentConfig;
  readonly config: EnvConfig;
  /** The event store (`LIFECYCLE_TABLE`): read by the load Task, written by `Persist`. */
  readonly table: ITable;
  /** Receives (as the SendMessage body) the state of every execution that could not apply its event, with the reason. */
  readonly deadLetterQueue: sqs.IQueue;
  /** Re-reads after version conflicts before the event is dead-lettered. @default 10 */
  readonly maxConflictRetries?: number;
  /** Notified when the failed-executions alarm fires. @default the alarm notifies nobody */
  readonly alarmTopic?: sns.ITopic;
}

/** Where an execution ends, and the Catch that sends whatever a Task fails with to the dead letter. */
interface LifecycleEnds {
  readonly done: sfn.Succeed;
  readonly duplicate: sfn.Succeed;
  readonly deadLetter: sfn.Chain;
  readonly catchAll: <T extends sfn.TaskStateBase>(task: T) => T;
}

/** `Done`, `Duplicate`, and `Dead letter` (SQS, with the reason) → `Event not applied`. */
function lifecycleEnds(scope: Construct, props: LifecycleWorkflowProps): LifecycleEnds {
  const S = LIFECYCLE_STATES;
  const done = new sfn.Succeed(scope, S.done, {
    comment: 'The event is applied: logged, and the snapshot (with any state change for the outbox) written.',
  });
  const duplicate = new sfn.Succeed(scope, S.duplicate, {
    comment: `The event id is already in the ${props.lifecycle.entity.name}'s log: nothing was applied.`,
  });
  const deadLetter = new tasks.SqsSendMessage(scope, S.deadLetter, {
    comment:
      'Sends the execution state, the event and the error that stopped it, to the incoming dead-letter queue (its alarm fires).',
    queue: props.deadLetterQueue,
    messageBody: sfn.TaskInput.fromJsonPathAt('$'),
    resultPath: sfn.JsonPath.DISCARD,
  }).next(
    new sfn.Fail(scope, S.failed, {
      comment: 'The event was not applied; it is in the dead-letter queue with its reason.',
      error: 'EventNotApplied',
      cause: 'The event was not applied; the execution state is in the dead-letter queue.',
    }),
  );
  const catchAll = <T extends sfn.TaskStateBase>(task: T): T => {
    task.addCatch(deadLetter, { errors: [sfn.Errors.ALL], resultPath: '$.error' });
    return task;
  };
  return { done, duplicate, deadLetter, catchAll };
}

/**
 * A lifecycle statechart compiled to an Express state machine whose input is the EventBridge
 * event (src/runtime/lifecycle/envelope.ts), drawn so that one event can be followed through it:
 *
 * `Load <entity>` (the event's entity snapshot; duplicate?) → `Route event`, a Choice: a
 * duplicate to `Duplicate`, else one rule per event type of the vocabulary to the transition Task
 * named by the type (its `Comment` lists what the event does in each state), anything else to
 * `Unknown event` → `Persist` (one conditional write; `VersionConflictError` → `Retry after
 * conflict` → `Load <entity>`, at most `maxConflictRetries` times; the same write puts the state
 * change's outbox item, which the table's stream publishes) → `After persist` → `Done`.
 * Whatever fails is caught to `Dead letter` (SQS, with the reason) → `Event not applied`.
 *
 * The state is the EventBridge event itself with the Tasks' results beside its fields
 * (`loaded`, `applied`, `persisted`, `error`): the event is in it once, and the Tasks that need it
 * read `$$.Execution.Input`, so an event of up to {@link MAX_EVENT_BYTES} fits with room to spare.
 * A larger one is refused by the load Task (`EventTooLargeError`), whose Catch puts the error in
 * place of the event's `detail`, so even the refusal fits; the dead letter names the event.
 *
 * Three functions: the load Task may read the table, `Persist` may write it, and the transition
 * function (every transition Task) has no access to anything: it is the pure `applyEvent`.
 *
 * @example
 * new LifecycleWorkflow(this, 'Lifecycle', { lifecycle: loadLifecycle('order-lifecycle'), agentConfig, config, table, deadLetterQueue });
 */
export class LifecycleWorkflow extends Construct {
  readonly stateMachine: sfn.StateMachine;
  readonly functions: {
    readonly load: StepwiseFunction;
    readonly apply: StepwiseFunction;
    readonly persist: StepwiseFunction;
  };
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
    const entity = lifecycle.entity.name;
    this.functions = {
      load: fn('LoadEntity', LIFECYCLE_ENTRIES.load, `reads a ${entity} and checks the event id`).bindTable(
        props.table,
        'read',
        'LIFECYCLE_TABLE',
      ),
      apply: fn('ApplyEvent', LIFECYCLE_ENTRIES.apply, `applies an event to a ${entity} (pure)`, {
        AGENT_CONFIG: JSON.stringify(props.agentConfig),
      }),
      persist: fn('Persist', LIFECYCLE_ENTRIES.persist, 'appends events and the snapshot in one write').bindTable(
        props.table,
        'write',
        'LIFECYCLE_TABLE',
      ),
    };

    this.logGroup = new logs.LogGroup(this, 'ExecutionLogs', {
      retention: config.logRetention,
      removalPolicy: config.removalPolicy,
    });
    this.stateMachine = new sfn.StateMachine(this, 'StateMachine', {
      stateMachineName: lifecycleStateMachineName(Stack.of(this).stackName, lifecycle.name),
      comment: `${lifecycle.name} ${lifecycle.version}: ${lifecycle.description}`,
      definitionBody: sfn.DefinitionBody.fromChainable(this.compile(new Construct(this, 'States'), props)),
      stateMachineType: sfn.StateMachineType.EXPRESS,
      tracingEnabled: true,
      logs: { destination: this.logGroup, level: sfn.LogLevel.ALL, includeExecutionData: config.executionDataInLogs },
    });
    (this.stateMachine.node.defaultChild as sfn.CfnStateMachine).addMetadata(WORKFLOW_METADATA, lifecycle.name);
    this.acknowledgeStateMachineRole();

    this.failedExecutionsAlarm = failedExecutionsAlarm(
      this,
      this.stateMachine,
      config,
      `${lifecycle.name} (${config.name}): ${entity} events not applied - see the incoming dead-letter queue.`,
      props.alarmTopic,
    );
  }

  private compile(scope: Construct, props: LifecycleWorkflowProps): sfn.IChainable {
    const ends = lifecycleEnds(scope, props);
    const load = this.loadTask(scope, props.lifecycle, ends);
    const persist = this.persistStates(scope, props, load, ends);
    return load.next(this.routeEvent(scope, props.lifecycle, persist, ends));
  }

  /**
   * `Load <entity>`. No Parameters: on the first pass the Task's input is the execution input exactly, so an event that
   * started the execution fits.
   */
  private loadTask(
    scope: Construct,
    def: LifecycleDefinition,
    { deadLetter, catchAll }: LifecycleEnds,
  ): tasks.LambdaInvoke {
    const load = new tasks.LambdaInvoke(scope, loadStateName(def), {
      comment: `Reads the ${def.entity.name}'s snapshot and whether the event id is already in its log. Refuses an event over ${Math.floor(MAX_EVENT_BYTES / 1024)} KiB or without detail.${def.entity.key}.`,
      lambdaFunction: this.functions.load,
      payloadResponseOnly: true,
      resultPath: '$.loaded',
    });
    // The refusal replaces the oversize detail, so the state that reaches the dead letter is small.
    load.addCatch(deadLetter, { errors: [EventTooLargeError.name], resultPath: '$.detail' });
    return catchAll(load);
  }

  /** `Persist`, with its retry after a version conflict (back to `load`) and the `After persist` Choice. */
  private persistStates(
    scope: Construct,
    props: LifecycleWorkflowProps,
    load: sfn.IChainable,
    ends: LifecycleEnds,
  ): tasks.LambdaInvoke {
    const entity = props.lifecycle.entity.name;
    const maxRetries = props.maxConflictRetries ?? 10;
    const persist = new tasks.LambdaInvoke(scope, LIFECYCLE_STATES.persist, {
      comment: `Appends the events and the new snapshot, and the state change for the outbox, in one write conditioned on the ${entity}'s event count.`,
      lambdaFunction: this.functions.persist,
      payloadResponseOnly: true,
      payload: sfn.TaskInput.fromObject({
        envelope: sfn.JsonPath.objectAt('$$.Execution.Input'),
        expectedEventCount: sfn.JsonPath.numberAt('$.loaded.entity.eventCount'),
        snapshot: sfn.JsonPath.objectAt('$.applied.snapshot'),
        events: sfn.JsonPath.listAt('$.applied.events'),
        stateChanged: sfn.JsonPath.objectAt('$.applied.stateChanged'),
        requestId: sfn.JsonPath.executionId,
      }),
      resultPath: '$.persisted',
    });
    // Someone else appended first: read again and re-apply, a bounded number of times.
    persist.addCatch(
      new sfn.Choice(scope, LIFECYCLE_STATES.retryConflict, {
        comment: `Another event of this ${entity} was written first: read it again (at most ${maxRetries} times), else dead-letter.`,
      })
        .when(sfn.Condition.numberLessThan('$.loaded.attempt', maxRetries), load)
        .otherwise(ends.deadLetter),
      { errors: [VersionConflictError.name], resultPath: '$.error' },
    );
    ends.catchAll(persist);

    // No publish here: Persist writes the change to the outbox in the same transaction, and the
    // table's stream publishes it, so a change can never be committed and lost.
    persist.next(
      new sfn.Choice(scope, LIFECYCLE_STATES.afterPersist, {
        comment: 'A redelivery that raced the first delivery past the load ends as a duplicate; anything else is done.',
      })
        .when(sfn.Condition.stringEquals('$.persisted.status', 'DUPLICATE'), ends.duplicate)
        .otherwise(ends.done),
    );
    return persist;
  }

  /** `Route event`: a duplicate ends; every event type to its transition Task, an unknown type to `Unknown event`. */
  private routeEvent(
    scope: Construct,
    def: LifecycleDefinition,
    persist: sfn.IChainable,
    ends: LifecycleEnds,
  ): sfn.Choice {
    const S = LIFECYCLE_STATES;
    const route = new sfn.Choice(scope, S.route, {
      comment: `A duplicate ends here; every other event goes to the Task of its type, and a type ${def.name} does not know to "${S.unknown}".`,
    }).when(sfn.Condition.booleanEquals('$.loaded.duplicate', true), ends.duplicate);
    for (const type of def.events)
      route.when(
        sfn.Condition.stringEquals('$.loaded.event.type', type),
        this.transitionTask(scope, type, `Applies ${type}: ${describeTransitions(def, type)}.`, ends.catchAll).next(
          persist,
        ),
      );
    return route.otherwise(
      this.transitionTask(
        scope,
        S.unknown,
        `Logs an event of a type ${def.name} does not know, with a refusal.`,
        ends.catchAll,
      ).next(persist),
    );
  }

  /** A Task that applies the event with the transition function; its name is the route, checked by the handler. */
  private transitionTask(
    scope: Construct,
    name: string,
    comment: string,
    catchAll: LifecycleEnds['catchAll'],
  ): tasks.LambdaInvoke {
    return catchAll(
      new tasks.LambdaInvoke(scope, name, {
        comment,
        lambdaFunction: this.functions.apply,
        payloadResponseOnly: true,
        payload: sfn.TaskInput.fromObject({
          route: name,
          envelope: sfn.JsonPath.objectAt('$$.Execution.Input'),
          entity: sfn.JsonPath.objectAt('$.loaded.entity'),
        }),
        resultPath: '$.applied',
      }),
    );
  }

  private acknowledgeStateMachineRole(): void {
    const role = Validations.of(this.stateMachine.role);
    role.acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason:
        'CloudWatch Logs delivery (logs:*LogDelivery*) and X-Ray (PutTraceSegments) support no resource-level permissions.',
    });
    // LambdaInvoke also grants `<function arn>:*`: the function's versions and aliases.
    for (const fn of Object.values(this.functions)) {
      const logicalId = this.stateMachine.stack.getLogicalId(fn.node.defaultChild as lambda.CfnFunction);
      role.acknowledge({
        id: `AwsSolutions-IAM5[Resource::<${logicalId}.Arn>:*]`,
        reason: 'lambda:InvokeFunction on the lifecycle function and its versions only.',
      });
    }
  }
}
