/**
 * Compiles a `workflow` step (src/definitions/workflow/constructs/workflow-step.ts) into states:
 * `<step>` (Task `states:startExecution.sync:2` on the child's state machine, its input mapped from
 * state and linked to this execution; the child's `result.data` and execution ARN go to
 * `$.result.fields`) → `<step>.outputs` (Choice: every declared output is there, else
 * `MissingChildOutput` at `$.error`, the fallback) → `<step>.result` (Pass: the declared outputs
 * become the step's result, merged into `data`).
 */
import * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import * as tasks from 'aws-cdk-lib/aws-stepfunctions-tasks';
import type { Construct } from 'constructs';
import { aslPath } from '../../../definitions/workflow/constructs/wait.ts';
import { childResultStateName } from '../../../definitions/workflow/constructs/workflow-step.ts';
import type { StepDefinition } from '../../../definitions/workflow/schema.ts';
import { errorPass, type StepStates } from './kit.ts';
import { constructResult } from './wait.ts';

export function workflowStepStates(scope: Construct, step: StepDefinition, child: sfn.IStateMachine): StepStates {
  const call = step.workflow!;
  const task = new tasks.StepFunctionsStartExecution(scope, step.name, {
    comment: `${step.description} [workflow step: starts ${call.name} and waits for its result, v${step.version}]`,
    stateMachine: child,
    integrationPattern: sfn.IntegrationPattern.RUN_JOB,
    associateWithParent: true,
    input: sfn.TaskInput.fromObject(
      Object.fromEntries(Object.entries(call.input).map(([k, path]) => [k, sfn.JsonPath.objectAt(aslPath(path))])),
    ),
    resultSelector: {
      data: sfn.JsonPath.objectAt('$.Output.result.data'),
      execution: sfn.JsonPath.stringAt('$.ExecutionArn'),
    },
    resultPath: '$.result.fields',
  });
  const picked = new sfn.Pass(scope, `${step.name}.outputs`, {
    comment: `The outputs of ${call.name} that ${step.name} declares: ${call.outputs.join(', ') || 'none'}.`,
    parameters: Object.fromEntries(call.outputs.map((o) => [o, sfn.JsonPath.objectAt(`$.result.fields.data.${o}`)])),
    resultPath: '$.result.fields',
  });
  const result = constructResult(scope, step, `${call.name} succeeded`, {
    id: childResultStateName(step.name),
    outputsPath: '$.result.fields',
  });
  const missing = errorPass(
    scope,
    `${step.name}.missing-output`,
    'MissingChildOutput',
    `${call.name} ended without one of ${call.outputs.join(', ')}`,
  );
  const check = call.outputs.length
    ? new sfn.Choice(scope, `${step.name}.check`, {
        comment: `Every output ${step.name} declares is in ${call.name}'s result.`,
      })
        .when(
          sfn.Condition.and(...call.outputs.map((o) => sfn.Condition.isPresent(`$.result.fields.data.${o}`))),
          picked.next(result),
        )
        .otherwise(missing)
    : picked.next(result);
  task.next(check);
  return { entry: task, last: result, catchable: [task], failing: call.outputs.length ? [missing] : [] };
}
