/**
 * Turn aws-local-stepfunctions' event log into Step Functions `GetExecutionHistory` events, so a
 * local execution reads (and is parsed by `stepTrail`) exactly like a deployed one.
 */
import type { HistoryEvent, HistoryEventType } from '@aws-sdk/client-sfn';
import type { StateMachine } from 'aws-local-stepfunctions';

/** One event of the interpreter's `eventLogs` (the library does not export the type). */
export type InterpreterEvent = ReturnType<StateMachine['run']>['eventLogs'] extends AsyncGenerator<infer E> ? E : never;

/** One attempt of a Task state's resource, recorded by the local runtime as it invokes it. */
export interface TaskInvocation {
  state: string;
  /** `lambda`: a Task whose Resource is the function ARN (LambdaFunction* events); `task`: a service integration such as `lambda:invoke` (Task* events). */
  kind: 'lambda' | 'task';
  /** The Resource (function ARN or integration ARN). */
  resource: string;
  input: unknown;
  startedAt: number;
  endedAt?: number;
  output?: unknown;
  error?: { Error: string; Cause: string };
}

export interface HistoryContext {
  roleArn: string;
  region: string;
  /** Task `TimeoutSeconds` by state name, when set. */
  timeouts?: Record<string, number>;
}

const json = (value: unknown) => JSON.stringify(value ?? null);
const data = { truncated: false };

/** `arn:aws:states:::lambda:invoke` → `{ resourceType: 'lambda', resource: 'invoke' }`, `…:::aws-sdk:dynamodb:putItem` → `aws-sdk:dynamodb` / `putItem` (as the history names integrations). */
function integration(arn: string) {
  const segments = arn.replace(/\.(sync|waitForTaskToken)(:\d+)?$/, '').split(':').slice(5);
  const action = segments.pop() ?? arn;
  return { resourceType: segments.join(':') || arn, resource: action };
}

const causeText = (cause: unknown) => (cause === undefined ? undefined : typeof cause === 'string' ? cause : JSON.stringify(cause));

/**
 * Convert the interpreter's events plus the runtime's task invocations (in invocation order) into
 * `HistoryEvent`s: `ExecutionStarted`, `<Type>StateEntered`/`Exited`, `LambdaFunctionScheduled` →
 * `Started` → `Succeeded`/`Failed`/`TimedOut` per attempt (or `TaskScheduled`... for service
 * integrations), `MapIteration*`, and the terminal `ExecutionSucceeded`/`Failed`/`TimedOut`/`Aborted`.
 * Ids are sequential and `previousEventId` is the preceding event, as in a sequential execution.
 */
export function toHistoryEvents(log: InterpreterEvent[], invocations: TaskInvocation[], ctx: HistoryContext): HistoryEvent[] {
  const events: HistoryEvent[] = [];
  const push = (type: HistoryEventType, at: number, details: Partial<HistoryEvent> = {}) =>
    events.push({ id: events.length + 1, previousEventId: events.length, timestamp: new Date(at), type, ...details });
  const pending = new Map<string, TaskInvocation[]>();
  for (const inv of invocations) pending.set(inv.state, [...(pending.get(inv.state) ?? []), inv]);
  /** The attempt in flight per state, until its outcome is reported. */
  const current = new Map<string, TaskInvocation>();

  const schedule = (state: string) => {
    const inv = pending.get(state)?.shift();
    if (!inv) return;
    current.set(state, inv);
    if (inv.kind === 'lambda') {
      const timeoutInSeconds = ctx.timeouts?.[state];
      push('LambdaFunctionScheduled', inv.startedAt, {
        lambdaFunctionScheduledEventDetails: { resource: inv.resource, input: json(inv.input), inputDetails: data, ...(timeoutInSeconds && { timeoutInSeconds }) },
      });
      push('LambdaFunctionStarted', inv.startedAt);
    } else {
      const { resourceType, resource } = integration(inv.resource);
      push('TaskScheduled', inv.startedAt, {
        taskScheduledEventDetails: { resourceType, resource, region: ctx.region, parameters: json(inv.input) },
      });
      push('TaskStarted', inv.startedAt, { taskStartedEventDetails: { resourceType, resource } });
    }
  };

  /** Report the outcome of the attempt in flight; `failure` is the state's error when it failed (a `States.Timeout` means the attempt was abandoned). */
  const settle = (state: string, at: number, failure?: { Error: string; Cause?: string }) => {
    const inv = current.get(state);
    if (!inv) return;
    current.delete(state);
    const end = inv.endedAt ?? at;
    const lambda = inv.kind === 'lambda';
    const target = lambda ? undefined : integration(inv.resource);
    const timedOut = failure?.Error === 'States.Timeout' || inv.endedAt === undefined;
    if (timedOut) {
      const details = { error: failure?.Error ?? 'States.Timeout', cause: failure?.Cause };
      if (lambda) push('LambdaFunctionTimedOut', at, { lambdaFunctionTimedOutEventDetails: details });
      else push('TaskTimedOut', at, { taskTimedOutEventDetails: { ...target!, ...details } });
    } else if (inv.error) {
      const details = { error: inv.error.Error, cause: inv.error.Cause };
      if (lambda) push('LambdaFunctionFailed', end, { lambdaFunctionFailedEventDetails: details });
      else push('TaskFailed', end, { taskFailedEventDetails: { ...target!, ...details } });
    } else if (lambda) {
      push('LambdaFunctionSucceeded', end, { lambdaFunctionSucceededEventDetails: { output: json(inv.output), outputDetails: data } });
    } else {
      push('TaskSucceeded', end, { taskSucceededEventDetails: { ...target!, output: json(inv.output), outputDetails: data } });
    }
  };

  for (const e of log) {
    switch (e.type) {
      case 'ExecutionStarted':
        push('ExecutionStarted', e.timestamp, {
          executionStartedEventDetails: { input: json(e.input), inputDetails: data, roleArn: ctx.roleArn },
        });
        break;
      case 'StateEntered':
        push(`${e.state.type}StateEntered` as HistoryEventType, e.timestamp, {
          stateEnteredEventDetails: { name: e.state.name, input: json(e.state.input), inputDetails: data },
        });
        if (e.state.type === 'Task') schedule(e.state.name);
        break;
      case 'StateFailed':
        if (e.state.type === 'Task') settle(e.state.name, e.timestamp, { Error: e.Error, Cause: causeText(e.Cause) });
        break;
      case 'StateRetried':
        if (e.state.type === 'Task') schedule(e.state.name);
        break;
      case 'StateExited':
        if (e.state.type === 'Task') settle(e.state.name, e.timestamp);
        push(`${e.state.type}StateExited` as HistoryEventType, e.timestamp, {
          stateExitedEventDetails: { name: e.state.name, output: json(e.state.output), outputDetails: data },
        });
        break;
      case 'MapIterationStarted':
      case 'MapIterationSucceeded':
      case 'MapIterationFailed': {
        const details = { name: e.parentState.name, index: e.index };
        const key = `mapIteration${e.type.slice('MapIteration'.length)}EventDetails` as const;
        push(e.type, e.timestamp, { [key]: details });
        break;
      }
      case 'ExecutionSucceeded':
        push('ExecutionSucceeded', e.timestamp, { executionSucceededEventDetails: { output: json(e.output), outputDetails: data } });
        break;
      case 'ExecutionFailed':
        push('ExecutionFailed', e.timestamp, { executionFailedEventDetails: { error: e.Error, cause: causeText(e.Cause) } });
        break;
      case 'ExecutionTimeout':
        push('ExecutionTimedOut', e.timestamp, { executionTimedOutEventDetails: { error: 'States.Timeout' } });
        break;
      case 'ExecutionAborted':
        push('ExecutionAborted', e.timestamp, { executionAbortedEventDetails: {} });
        break;
      // StateCaught is followed by the state's StateExited (as in Step Functions); Parallel branch events have no history counterpart.
      default:
        break;
    }
  }
  return events;
}
