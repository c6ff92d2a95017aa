/**
 * A step's `pause`, compiled: after the step's Task, a Choice `<step>.checkpoint` sends routes to
 * the paused edges (while the circuit breaker has room, and when the step set its `when` output)
 * to `<step>.pause`, a
 * `events:putEvents.waitForTaskToken` Task. It publishes the task token, the step's result and the
 * required actions on the account's default bus (`source: stepwise.checkpoints`) and waits until
 * someone calls `SendTaskSuccess` (the output lands at `$.result.data.checkpoint`, read by the next
 * step), `SendTaskFailure` (caught to the fallback) or the `TimeoutSeconds`/`HeartbeatSeconds` run
 * out (caught to the `onTimeout` escalation step, the error at `$.error`). Then the step's route
 * Choice runs as without a pause.
 */
import { Duration } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import * as tasks from 'aws-cdk-lib/aws-stepfunctions-tasks';
import type { Construct } from 'constructs';
import {
  CHECKPOINT_DATA_KEY,
  checkpointStateName,
  PAUSE_EVENT_DETAIL_TYPE,
  PAUSE_EVENT_SOURCE,
  pausedEdges,
  pauseStateName,
} from '../../definitions/workflow/pause.ts';
import type { StepDefinition, WorkflowDefinition } from '../../definitions/workflow/schema.ts';

/** Errors a checkpoint that nobody resumed in time ends with. */
export const PAUSE_TIMEOUT_ERRORS = [sfn.Errors.TIMEOUT, 'States.HeartbeatTimeout'];

export interface PauseStatesProps {
  readonly step: StepDefinition;
  readonly workflow: WorkflowDefinition;
  /** The step's route Choice: where the checkpoint continues (and where unpaused routes go at once). */
  readonly route: sfn.IChainable;
  /** The escalation step's Task (`pause.onTimeout`). */
  readonly onTimeout: sfn.IChainable;
  /** The fallback step's Task: a `SendTaskFailure` goes there. */
  readonly fallback: sfn.IChainable;
}

/**
 * The checkpoint Choice and the pause Task of a step with `pause`; returns the Choice (the step's Task's next state).
 */
export function pauseStates(scope: Construct, props: PauseStatesProps): sfn.IChainable {
  const { step, workflow, route } = props;
  const pause = step.pause!;
  const task = new tasks.EventBridgePutEvents(scope, pauseStateName(step.name), {
    comment: `Checkpoint after ${step.name}: publishes the task token and the required actions, then waits up to ${pause.timeoutSeconds} s for SendTaskSuccess (the output goes to $.result.data.${CHECKPOINT_DATA_KEY}); SendTaskFailure → the fallback, timeout → ${pause.onTimeout}.`,
    integrationPattern: sfn.IntegrationPattern.WAIT_FOR_TASK_TOKEN,
    entries: [
      {
        source: PAUSE_EVENT_SOURCE,
        detailType: PAUSE_EVENT_DETAIL_TYPE,
        detail: sfn.TaskInput.fromObject({
          taskToken: sfn.JsonPath.taskToken,
          workflow: workflow.manifest.name,
          execution: sfn.JsonPath.executionId,
          step: step.name,
          next: sfn.JsonPath.stringAt('$.result.next'),
          reason: sfn.JsonPath.stringAt('$.result.reason'),
          fields: sfn.JsonPath.objectAt('$.result.fields'),
          ...(pause.actions && { actionsField: pause.actions }),
          ...(pause.instructions && { instructions: pause.instructions }),
          timeoutSeconds: pause.timeoutSeconds,
          ...(pause.heartbeatSeconds && { heartbeatSeconds: pause.heartbeatSeconds }),
        }),
      },
    ],
    taskTimeout: sfn.Timeout.duration(Duration.seconds(pause.timeoutSeconds)),
    ...(pause.heartbeatSeconds && { heartbeatTimeout: sfn.Timeout.duration(Duration.seconds(pause.heartbeatSeconds)) }),
    resultPath: `$.result.data.${CHECKPOINT_DATA_KEY}`,
  });
  task.addCatch(props.onTimeout, { errors: PAUSE_TIMEOUT_ERRORS, resultPath: '$.error' });
  task.addCatch(props.fallback, { errors: [sfn.Errors.ALL], resultPath: '$.error' });
  task.next(route);
  // The circuit breaker of the route Choice would stop the execution anyway: no checkpoint before it.
  const room = sfn.Condition.numberLessThan('$.result.count', workflow.manifest.maxSteps);
  const asked =
    pause.when &&
    sfn.Condition.and(
      sfn.Condition.isPresent(`$.result.fields.${pause.when}`),
      sfn.Condition.booleanEquals(`$.result.fields.${pause.when}`, true),
    );
  const checkpoint = new sfn.Choice(scope, checkpointStateName(step.name), {
    comment: `Whether ${step.name}'s route pauses: ${pausedEdges(step).join(', ')}${pause.when ? ` when fields.${pause.when} is true` : ''} wait at ${pauseStateName(step.name)}; every other route goes on.`,
  });
  for (const edge of pausedEdges(step))
    checkpoint.when(
      sfn.Condition.and(sfn.Condition.stringEquals('$.result.next', edge), room, ...(asked ? [asked] : [])),
      task,
    );
  return checkpoint.otherwise(route);
}

/**
 * A managed policy that lets its holder resume the workflow's checkpoints:
 * `states:SendTaskSuccess`, `SendTaskFailure`, `SendTaskHeartbeat` on this state machine only.
 * Attach it to the role of whoever resumes (a person's role, an approval Lambda, an agent).
 */
export function resumePolicy(scope: Construct, stateMachine: sfn.IStateMachine): iam.ManagedPolicy {
  return new iam.ManagedPolicy(scope, 'ResumeCheckpointsPolicy', {
    description: 'Resume the paused checkpoints of one Stepwise workflow (SendTaskSuccess/Failure/Heartbeat).',
    statements: [
      new iam.PolicyStatement({
        actions: ['states:SendTaskSuccess', 'states:SendTaskFailure', 'states:SendTaskHeartbeat'],
        resources: [stateMachine.stateMachineArn],
      }),
    ],
  });
}
