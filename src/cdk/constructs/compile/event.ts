/**
 * Compiles an `event` step (src/definitions/workflow/constructs/event.ts) into states:
 * `<step>.key` (a Choice: no correlation key in the state is `MissingCorrelationKey` at `$.error`,
 * the fallback) → `<step>.wait-event` (a `lambda:invoke.waitForTaskToken` Task: the registering
 * function records the token under the key; `TimeoutSeconds` is the deadline; `States.Timeout` is
 * caught to `onTimeout`, any other error to the fallback; the event's detail lands in
 * `$.result.fields.<output>`) → `<step>` (a Pass: the step's result, its one edge).
 */
import { Duration } from 'aws-cdk-lib';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import * as tasks from 'aws-cdk-lib/aws-stepfunctions-tasks';
import type { Construct } from 'constructs';
import {
  deadlineText,
  eventCheckStateName,
  eventWaitStateName,
  MISSING_KEY_ERROR,
} from '../../../definitions/workflow/constructs/event.ts';
import { aslPath } from '../../../definitions/workflow/constructs/wait.ts';
import type { StepDefinition, WorkflowDefinition } from '../../../definitions/workflow/schema.ts';
import { errorPass, type StepStates } from './kit.ts';
import { constructResult } from './wait.ts';

export function eventStates(
  scope: Construct,
  step: StepDefinition,
  workflow: WorkflowDefinition,
  register: lambda.IFunction,
): StepStates {
  const event = step.event!;
  const wait = new tasks.LambdaInvoke(scope, eventWaitStateName(step.name), {
    comment: `Waits up to ${deadlineText(event.timeoutSeconds)} for ${event.detailType} from ${event.source} whose detail.${event.match} equals ${event.key}; then ${step.next[0]}, or ${event.onTimeout} when none came.`,
    lambdaFunction: register,
    integrationPattern: sfn.IntegrationPattern.WAIT_FOR_TASK_TOKEN,
    payload: sfn.TaskInput.fromObject({
      taskToken: sfn.JsonPath.taskToken,
      workflow: workflow.manifest.name,
      step: step.name,
      execution: sfn.JsonPath.executionId,
      source: event.source,
      detailType: event.detailType,
      match: event.match,
      key: sfn.JsonPath.objectAt(aslPath(event.key)),
      timeoutSeconds: event.timeoutSeconds,
    }),
    taskTimeout: sfn.Timeout.duration(Duration.seconds(event.timeoutSeconds)),
    retryOnServiceExceptions: false,
    resultSelector: { [event.output]: sfn.JsonPath.objectAt('$') },
    resultPath: '$.result.fields',
  });
  const result = constructResult(scope, step, `${event.detailType} arrived`, { outputsPath: '$.result.fields' });
  wait.next(result);
  const missing = errorPass(
    scope,
    `${step.name}.no-key`,
    MISSING_KEY_ERROR,
    `${event.key} is not in the state: no event can be matched to this execution`,
  );
  const check = new sfn.Choice(scope, eventCheckStateName(step.name), {
    comment: `Waits only with a correlation key at ${event.key}; without one, ${MISSING_KEY_ERROR}.`,
  })
    .when(sfn.Condition.isPresent(aslPath(event.key)), wait)
    .otherwise(missing);
  return {
    entry: check,
    last: result,
    catchable: [wait],
    failing: [missing],
    routed: [{ states: [wait], errors: [sfn.Errors.TIMEOUT], to: event.onTimeout }],
  };
}
