/**
 * Compiles a `wait` step into states: `<step>.wait` (a Wait state: `Seconds`, or `TimestampPath`
 * after `<step>.check`, a Choice that sends a missing or malformed timestamp to the fallback with
 * `InvalidTimestamp` at `$.error`) → `<step>` (a Pass that records the step's result: its one edge,
 * the step counted for the circuit breaker).
 */
import { Duration } from 'aws-cdk-lib';
import * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import type { Construct } from 'constructs';
import { aslPath, waitCheckStateName, waitStateName } from '../../../definitions/workflow/constructs/wait.ts';
import type { StepDefinition } from '../../../definitions/workflow/schema.ts';
import { errorPass, type StepStates } from './kit.ts';

/** The Pass named as the step: its result (with the outputs at `outputsPath`, if any), routed like any step's. */
export function constructResult(
  scope: Construct,
  step: StepDefinition,
  reason: string,
  { id = step.name, outputsPath }: { id?: string; outputsPath?: string } = {},
): sfn.Pass {
  const data = sfn.JsonPath.objectAt('$.result.data');
  return new sfn.Pass(scope, id, {
    comment: `${step.description} [${step.kind} step, v${step.version}]`,
    parameters: {
      step: step.name,
      next: step.next[0]!,
      reason,
      decidedBy: 'code',
      fields: outputsPath ? sfn.JsonPath.objectAt(outputsPath) : {},
      data: outputsPath ? sfn.JsonPath.jsonMerge(data, sfn.JsonPath.objectAt(outputsPath)) : data,
      count: sfn.JsonPath.mathAdd(sfn.JsonPath.numberAt('$.result.count'), 1),
    },
    resultPath: '$.result',
  });
}

export function waitStates(scope: Construct, step: StepDefinition): StepStates {
  const { seconds, until } = step.wait!;
  const time =
    until === undefined
      ? sfn.WaitTime.duration(Duration.seconds(seconds!))
      : sfn.WaitTime.timestampPath(aslPath(until));
  const wait = new sfn.Wait(scope, waitStateName(step.name), {
    comment: until === undefined ? `Waits ${seconds} s.` : `Waits until the time at ${until}.`,
    time,
  });
  const result = constructResult(scope, step, until === undefined ? `waited ${seconds} s` : `waited until ${until}`);
  wait.next(result);
  if (until === undefined) return { entry: wait, last: result, catchable: [] };
  const invalid = errorPass(
    scope,
    `${step.name}.invalid-time`,
    'InvalidTimestamp',
    `${until} is not an ISO 8601 timestamp`,
  );
  const check = new sfn.Choice(scope, waitCheckStateName(step.name), {
    comment: `Waits only on a timestamp at ${until}; anything else is InvalidTimestamp.`,
  })
    .when(sfn.Condition.isTimestamp(aslPath(until)), wait)
    .otherwise(invalid);
  return { entry: check, last: result, catchable: [], failing: [invalid] };
}
