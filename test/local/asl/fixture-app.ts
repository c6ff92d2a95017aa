/**
 * Building blocks for the local runtime's integration tests: a CDK app built in the test, with
 * functions running the recorder fixture (test/fixtures/handlers/recorder.ts).
 */
import { Duration, type Stack } from 'aws-cdk-lib';
import * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import * as tasks from 'aws-cdk-lib/aws-stepfunctions-tasks';
import { StepwiseFunction } from '../../../src/cdk/constructs/stepwise-function.ts';
import { fixtureEnv } from '../../support/fixture-project.ts';

export const RECORDER_ENTRY = 'test/fixtures/handlers/recorder.ts';

/** A function running the recorder, with the given Lambda timeout. */
export function recorderFunction(stack: Stack, id: string, timeoutSeconds: number): StepwiseFunction {
  return new StepwiseFunction(stack, id, {
    entry: RECORDER_ENTRY,
    config: fixtureEnv('dev'),
    serviceName: 'test',
    timeout: Duration.seconds(timeoutSeconds),
  });
}

/** The recorder's payload: `fields` plus the execution name (so a test can find its calls). */
export const recorderPayload = (fields: Record<string, unknown> = {}) =>
  sfn.TaskInput.fromObject({ 'execution.$': '$$.Execution.Name', ...fields });

/** A Task invoking `fn` with the function ARN as its Resource (LambdaFunction* history events). */
export function invokeByArn(
  stack: Stack,
  id: string,
  fn: StepwiseFunction,
  props: Partial<tasks.LambdaInvokeProps> = {},
): tasks.LambdaInvoke {
  return new tasks.LambdaInvoke(stack, id, {
    lambdaFunction: fn,
    payloadResponseOnly: true,
    retryOnServiceExceptions: false,
    payload: recorderPayload(),
    ...props,
  });
}

/** A Task invoking `fn` through the `lambda:invoke` integration, keeping only the Payload. */
export function invokeIntegration(
  stack: Stack,
  id: string,
  fn: StepwiseFunction,
  props: Partial<tasks.LambdaInvokeProps> = {},
): tasks.LambdaInvoke {
  return new tasks.LambdaInvoke(stack, id, {
    lambdaFunction: fn,
    retryOnServiceExceptions: false,
    payload: recorderPayload(),
    outputPath: '$.Payload',
    ...props,
  });
}

/** A Standard state machine named `name`. */
export function machine(stack: Stack, name: string, chain: sfn.IChainable): sfn.StateMachine {
  return new sfn.StateMachine(stack, name, {
    stateMachineName: name,
    definitionBody: sfn.DefinitionBody.fromChainable(chain),
  });
}
