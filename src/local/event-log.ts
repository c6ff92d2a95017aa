/**
 * Turn aws-local-stepfunctions' event log into Step Functions `GetExecutionHistory` events, so a
 * local execution reads (and is parsed by `stepTrail`) exactly like a deployed one.
 */
import type { HistoryEvent, HistoryEventType } from '@aws-sdk/client-sfn';
import type { StateMachine } from 'aws-local-stepfunctions';
import { SCOPE, TEXT, type TaskTimeouts } from './interpreter.ts';

/** One event of the interpreter's `eventLogs` (the library does not export the type), with the scope the runtime's hooks tag it with. */
export type InterpreterEvent = (ReturnType<StateMachine['run']>['eventLogs'] extends AsyncGenerator<infer E> ? E : never) & { [SCOPE]?: number; [TEXT]?: string };

/** One attempt of a Task state's resource, recorded by the local runtime as it invokes it. */
export interface TaskInvocation {
  state: string;
  /** The execution it ran in: 0 for the root, else a Map iteration or Parallel branch (see {@link HistoryContext.parents}). @default 0 */
  scope?: number;
  /** `lambda`: a Task whose Resource is the function ARN (LambdaFunction* events); `task`: a service integration such as `lambda:invoke` (Task* events). */
  kind: 'lambda' | 'task';
  /** The Resource (function ARN or integration ARN). */
  resource: string;
  input: unknown;
  /** The JSON text of `input`, when the runtime made it already. */
  inputText?: string;
  startedAt: number;
  endedAt?: number;
  output?: unknown;
  /** The JSON text of `output`, when the runtime made it already. */
  outputText?: string;
  error?: { Error: string; Cause: string };
}

export interface HistoryContext {
  roleArn: string;
  region: string;
  /** Task `TimeoutSeconds`/`HeartbeatSeconds` by state name, when declared. */
  timeouts?: Record<string, TaskTimeouts>;
  /** The parent scope of each nested execution's scope (Map iteration, Parallel branch); the root (0) has none. */
  parents?: Map<number, number | undefined>;
}

const json = (value: unknown) => JSON.stringify(value ?? null);
const data = { truncated: false };

/** `arn:aws:states:::lambda:invoke` → `{ resourceType: 'lambda', resource: 'invoke' }`, `…:::aws-sdk:dynamodb:putItem` → `aws-sdk:dynamodb` / `putItem` (as the history names integrations). */
export function integration(arn: string) {
  const segments = arn.replace(/\.(sync|waitForTaskToken)(:\d+)?$/, '').split(':').slice(5);
  const action = segments.pop() ?? arn;
  return { resourceType: segments.join(':') || arn, resource: action };
}

const causeText = (cause: unknown) => (cause === undefined ? undefined : typeof cause === 'string' ? cause : JSON.stringify(cause));

/** State types that run nested executions, and the history's name for them. */
const NESTING = { Map: 'MapState', Parallel: 'ParallelState' } as const;

/**
 * Convert the interpreter's events plus the runtime's task invocations (in invocation order) into
 * `HistoryEvent`s: `ExecutionStarted`, `<Type>StateEntered`/`Exited`, `LambdaFunctionScheduled` →
 * `Started` → `Succeeded`/`Failed`/`TimedOut` per attempt (or `TaskScheduled`... for service
 * integrations), `MapStateStarted`/`Succeeded`/`Failed` with `MapIterationStarted`/`Succeeded`/`Failed`
 * (`Aborted` for those a failed Map stopped) around each iteration's states, `ParallelStateStarted`/`Succeeded`/`Failed`, and the terminal
 * `ExecutionSucceeded`/`Failed`/`TimedOut`/`Aborted`.
 *
 * Ids are sequential; `previousEventId` is the preceding event of the same execution (root, Map
 * iteration or Parallel branch), the first event of an iteration or branch pointing at its parent's
 * latest, as Step Functions chains concurrent iterations. Task attempts are matched to their state
 * by scope, so concurrent iterations of one state never swap inputs or outputs.
 */
export function toHistoryEvents(log: InterpreterEvent[], invocations: TaskInvocation[], ctx: HistoryContext): HistoryEvent[] {
  const events: HistoryEvent[] = [];
  /** Latest event id per scope. */
  const latest = new Map<number, number>();
  const previousOf = (scope: number): number => {
    for (let s: number | undefined = scope; s !== undefined; s = ctx.parents?.get(s)) {
      const id = latest.get(s);
      if (id !== undefined) return id;
    }
    return 0;
  };
  const push = (scope: number, type: HistoryEventType, at: number, details: Partial<HistoryEvent> = {}): HistoryEvent => {
    const event: HistoryEvent = { id: events.length + 1, previousEventId: previousOf(scope), timestamp: new Date(at), type, ...details };
    events.push(event);
    latest.set(scope, event.id!);
    return event;
  };
  const key = (scope: number, state: string) => `${scope}|${state}`;
  const pending = new Map<string, TaskInvocation[]>();
  for (const inv of invocations) {
    const k = key(inv.scope ?? 0, inv.state);
    pending.set(k, [...(pending.get(k) ?? []), inv]);
  }
  /** The attempt in flight per scoped state, until its outcome is reported. */
  const current = new Map<string, TaskInvocation>();
  /** Per scoped Map state: its `MapStateStarted` (to count iterations) and its running iterations (scope → index). */
  const maps = new Map<string, { started: HistoryEvent; running: Map<number, number> }>();
  /** Map/Parallel states that failed (their exit, when caught, is not a success). */
  const failed = new Set<string>();

  const schedule = (scope: number, state: string) => {
    const k = key(scope, state);
    const inv = pending.get(k)?.shift();
    if (!inv) return;
    current.set(k, inv);
    const { timeoutInSeconds, heartbeatInSeconds } = ctx.timeouts?.[state] ?? {};
    if (inv.kind === 'lambda') {
      push(scope, 'LambdaFunctionScheduled', inv.startedAt, {
        lambdaFunctionScheduledEventDetails: { resource: inv.resource, input: inv.inputText ?? json(inv.input), inputDetails: data, ...(timeoutInSeconds && { timeoutInSeconds }) },
      });
      push(scope, 'LambdaFunctionStarted', inv.startedAt);
    } else {
      const { resourceType, resource } = integration(inv.resource);
      push(scope, 'TaskScheduled', inv.startedAt, {
        taskScheduledEventDetails: {
          resourceType,
          resource,
          region: ctx.region,
          parameters: inv.inputText ?? json(inv.input),
          ...(timeoutInSeconds && { timeoutInSeconds }),
          ...(heartbeatInSeconds && { heartbeatInSeconds }),
        },
      });
      push(scope, 'TaskStarted', inv.startedAt, { taskStartedEventDetails: { resourceType, resource } });
    }
  };

  /** Report the outcome of the attempt in flight; `failure` is the state's error when it failed (a `States.Timeout` means the attempt was abandoned). */
  const settle = (scope: number, state: string, at: number, failure?: { Error: string; Cause?: string }) => {
    const k = key(scope, state);
    const inv = current.get(k);
    if (!inv) return;
    current.delete(k);
    const end = inv.endedAt ?? at;
    const lambda = inv.kind === 'lambda';
    const target = lambda ? undefined : integration(inv.resource);
    const timedOut = failure?.Error === 'States.Timeout' || inv.endedAt === undefined;
    if (timedOut) {
      const details = { error: failure?.Error ?? 'States.Timeout', cause: failure?.Cause };
      if (lambda) push(scope, 'LambdaFunctionTimedOut', at, { lambdaFunctionTimedOutEventDetails: details });
      else push(scope, 'TaskTimedOut', at, { taskTimedOutEventDetails: { ...target!, ...details } });
    } else if (inv.error) {
      const details = { error: inv.error.Error, cause: inv.error.Cause };
      if (lambda) push(scope, 'LambdaFunctionFailed', end, { lambdaFunctionFailedEventDetails: details });
      else push(scope, 'TaskFailed', end, { taskFailedEventDetails: { ...target!, ...details } });
    } else if (lambda) {
      push(scope, 'LambdaFunctionSucceeded', end, { lambdaFunctionSucceededEventDetails: { output: inv.outputText ?? json(inv.output), outputDetails: data } });
    } else {
      push(scope, 'TaskSucceeded', end, { taskSucceededEventDetails: { ...target!, output: inv.outputText ?? json(inv.output), outputDetails: data } });
    }
  };

  for (const e of log) {
    const scope = e[SCOPE] ?? 0;
    switch (e.type) {
      case 'ExecutionStarted':
        push(scope, 'ExecutionStarted', e.timestamp, {
          executionStartedEventDetails: { input: e[TEXT] ?? json(e.input), inputDetails: data, roleArn: ctx.roleArn },
        });
        break;
      case 'StateEntered': {
        push(scope, `${e.state.type}StateEntered` as HistoryEventType, e.timestamp, {
          stateEnteredEventDetails: { name: e.state.name, input: e[TEXT] ?? json(e.state.input), inputDetails: data },
        });
        if (e.state.type === 'Task') schedule(scope, e.state.name);
        if (e.state.type === 'Map') {
          const started = push(scope, 'MapStateStarted', e.timestamp, { mapStateStartedEventDetails: { length: 0 } });
          maps.set(key(scope, e.state.name), { started, running: new Map() });
        }
        if (e.state.type === 'Parallel') push(scope, 'ParallelStateStarted', e.timestamp);
        break;
      }
      case 'StateFailed':
        if (e.state.type === 'Task') settle(scope, e.state.name, e.timestamp, { Error: e.Error, Cause: causeText(e.Cause) });
        if (e.state.type === 'Map' || e.state.type === 'Parallel') {
          const k = key(scope, e.state.name);
          failed.add(k);
          // The interpreter stops the other iterations of a failed Map.
          for (const [iteration, index] of maps.get(k)?.running ?? []) {
            push(iteration, 'MapIterationAborted', e.timestamp, { mapIterationAbortedEventDetails: { name: e.state.name, index } });
          }
          maps.get(k)?.running.clear();
          push(scope, `${NESTING[e.state.type]}Failed`, e.timestamp);
        }
        break;
      case 'StateRetried':
        if (e.state.type === 'Task') schedule(scope, e.state.name);
        if (e.state.type === 'Map' || e.state.type === 'Parallel') failed.delete(key(scope, e.state.name));
        break;
      case 'StateExited': {
        const k = key(scope, e.state.name);
        if (e.state.type === 'Task') settle(scope, e.state.name, e.timestamp);
        // A caught Map/Parallel state exits after its `…StateFailed`.
        if ((e.state.type === 'Map' || e.state.type === 'Parallel') && !failed.delete(k)) push(scope, `${NESTING[e.state.type]}Succeeded`, e.timestamp);
        push(scope, `${e.state.type}StateExited` as HistoryEventType, e.timestamp, {
          stateExitedEventDetails: { name: e.state.name, output: e[TEXT] ?? json(e.state.output), outputDetails: data },
        });
        break;
      }
      case 'MapIterationStarted':
      case 'MapIterationSucceeded':
      case 'MapIterationFailed': {
        const details = { name: e.parentState.name, index: e.index };
        const detailsKey = `mapIteration${e.type.slice('MapIteration'.length)}EventDetails` as const;
        push(scope, e.type, e.timestamp, { [detailsKey]: details });
        const map = maps.get(key(ctx.parents?.get(scope) ?? 0, e.parentState.name));
        if (!map) break;
        if (e.type !== 'MapIterationStarted') {
          map.running.delete(scope);
          break;
        }
        map.running.set(scope, e.index);
        map.started.mapStateStartedEventDetails = { length: (map.started.mapStateStartedEventDetails?.length ?? 0) + 1 };
        break;
      }
      case 'ExecutionSucceeded':
        push(scope, 'ExecutionSucceeded', e.timestamp, { executionSucceededEventDetails: { output: e[TEXT] ?? json(e.output), outputDetails: data } });
        break;
      case 'ExecutionFailed':
        push(scope, 'ExecutionFailed', e.timestamp, { executionFailedEventDetails: { error: e.Error, cause: causeText(e.Cause) } });
        break;
      case 'ExecutionTimeout':
        push(scope, 'ExecutionTimedOut', e.timestamp, { executionTimedOutEventDetails: { error: 'States.Timeout' } });
        break;
      case 'ExecutionAborted':
        push(scope, 'ExecutionAborted', e.timestamp, { executionAbortedEventDetails: {} });
        break;
      // StateCaught is followed by the state's StateExited (as in Step Functions); Parallel branch events have no history counterpart.
      default:
        break;
    }
  }
  return events;
}
