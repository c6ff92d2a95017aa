/**
 * A `workflow` step, locally: the `states:startExecution.sync:2` Task starts the child workflow on
 * the same runtime (same session, same functions and tables) and waits for it, answering what
 * Step Functions answers: the child's execution with its output as JSON, or the Task failing with
 * `States.TaskFailed` when the child did not succeed. The two histories link as on AWS: the
 * parent's Task output names the child's execution, and the child's input carries the parent's
 * execution id (`AWS_STEP_FUNCTIONS_STARTED_BY_EXECUTION_ID`).
 */
import type { HistoryEvent } from '@aws-sdk/client-sfn';
import { STARTED_BY } from '../../definitions/workflow/input.ts';
import type { LocalExecution } from './execution-driver.ts';
import type { TaskHandler } from './interpreter.ts';

/** The Task failed because its child execution did not succeed (the name Step Functions gives it). */
export class ChildExecutionFailed extends Error {
  override name = 'States.TaskFailed';
}

/** The `.sync:2` integration over `start`, which runs an execution of a state machine of the app by ARN. */
export function childExecutionIntegration(
  start: (stateMachineArn: string, input: unknown) => Promise<LocalExecution>,
): TaskHandler {
  return async (event: { StateMachineArn: string; Input?: unknown }) => {
    const child = await start(event.StateMachineArn, event.Input ?? {});
    const described = {
      ExecutionArn: child.executionArn,
      StateMachineArn: event.StateMachineArn,
      Name: child.name,
      Status: child.status,
      Input: child.input,
      ...(child.status === 'SUCCEEDED' && { Output: child.output }),
    };
    if (child.status !== 'SUCCEEDED') throw new ChildExecutionFailed(JSON.stringify({ ...described, ...child.error }));
    return described;
  };
}

/** The execution ARNs of the children an execution started, from its history (each `.sync` Task's output). */
export function childExecutionArns(history: readonly HistoryEvent[]): string[] {
  return history.flatMap((e) => {
    const details = e.type === 'TaskSucceeded' ? e.taskSucceededEventDetails : undefined;
    if (!details?.output || details.resourceType !== 'states' || details.resource !== 'startExecution') return [];
    const output = details.output;
    const arn = (JSON.parse(output) as { ExecutionArn?: unknown }).ExecutionArn;
    return typeof arn === 'string' ? [arn] : [];
  });
}

/** The execution ARN of the parent that started an execution, from its input; none for a top-level execution. */
export function parentExecutionArn(input: unknown): string | undefined {
  const parent = (input as Record<string, unknown> | null)?.[STARTED_BY];
  return typeof parent === 'string' ? parent : undefined;
}
