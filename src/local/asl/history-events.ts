/**
 * Turn aws-local-stepfunctions' event log into Step Functions `GetExecutionHistory` events, so a
 * local execution reads (and is parsed by `stepTrail`) exactly like a deployed one.
 */
import type { HistoryEvent, HistoryEventType } from '@aws-sdk/client-sfn';
import type { StateMachine } from 'aws-local-stepfunctions';
import { SCOPE, type TaskTimeouts, TEXT } from './interpreter.ts';

/**
 * One event of the interpreter's `eventLogs` (the library does not export the type), with the scope the runtime's hooks
 * tag it with.
 */
export type InterpreterEvent = (ReturnType<StateMachine['run']>['eventLogs'] extends AsyncGenerator<infer E>
  ? E
  : never) & { [SCOPE]?: number; [TEXT]?: string };

/** One attempt of a Task state's resource, recorded by the local runtime as it invokes it. */
export interface TaskInvocation {
  state: string;
  /**
   * The execution it ran in: 0 for the root, else a Map iteration or Parallel branch (see {@link
   * HistoryContext.parents}). @default 0
   */
  scope?: number;
  /**
   * `lambda`: a Task whose Resource is the function ARN (LambdaFunction* events); `task`: a service integration such as
   * `lambda:invoke` (Task* events).
   */
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

/**
 * `arn:aws:states:::lambda:invoke` → `{ resourceType: 'lambda', resource: 'invoke' }`, `…:::aws-sdk:dynamodb:putItem` →
 * `aws-sdk:dynamodb` / `putItem` (as the history names integrations).
 */
export function integration(arn: string) {
  const segments = arn
    .replace(/\.(sync|waitForTaskToken)(:\d+)?$/, '')
    .split(':')
    .slice(5);
  const action = segments.pop() ?? arn;
  return { resourceType: segments.join(':') || arn, resource: action };
}

const causeText = (cause: unknown) =>
  cause === undefined ? undefined : typeof cause === 'string' ? cause : JSON.stringify(cause);

/** State types that run nested executions, and the history's name for them. */
const NESTING = { Map: 'MapState', Parallel: 'ParallelState' } as const;

type EventOf<T extends InterpreterEvent['type']> = Extract<InterpreterEvent, { type: T }>;
type MapIterationEvent = EventOf<'MapIterationStarted' | 'MapIterationSucceeded' | 'MapIterationFailed'>;

/** A Task state of one execution scope, as the builder keys its attempts. */
const scoped = (scope: number, state: string) => `${scope}|${state}`;

/** Builds the history of one execution, event by event of the interpreter's log (see {@link toHistoryEvents}). */
class HistoryBuilder {
  readonly events: HistoryEvent[] = [];
  /** Latest event id per scope. */
  private readonly latest = new Map<number, number>();
  /** The attempts not yet scheduled, per scoped Task state, in invocation order. */
  private readonly pending = new Map<string, TaskInvocation[]>();
  /** The attempt in flight per scoped state, until its outcome is reported. */
  private readonly current = new Map<string, TaskInvocation>();
  /** Per scoped Map state: its `MapStateStarted` (to count iterations) and its running iterations (scope → index). */
  private readonly maps = new Map<string, { started: HistoryEvent; running: Map<number, number> }>();
  /** Map/Parallel states that failed (their exit, when caught, is not a success). */
  private readonly failed = new Set<string>();

  constructor(
    invocations: TaskInvocation[],
    private readonly ctx: HistoryContext,
  ) {
    for (const inv of invocations) {
      const k = scoped(inv.scope ?? 0, inv.state);
      this.pending.set(k, [...(this.pending.get(k) ?? []), inv]);
    }
  }

  /** Add the history events of one interpreter event. */
  add(e: InterpreterEvent): void {
    const scope = e[SCOPE] ?? 0;
    switch (e.type) {
      case 'ExecutionStarted':
        this.push(scope, 'ExecutionStarted', e.timestamp, {
          executionStartedEventDetails: {
            input: e[TEXT] ?? json(e.input),
            inputDetails: data,
            roleArn: this.ctx.roleArn,
          },
        });
        break;
      case 'StateEntered':
        this.stateEntered(scope, e);
        break;
      case 'StateFailed':
        this.stateFailed(scope, e);
        break;
      case 'StateRetried':
        if (e.state.type === 'Task') this.schedule(scope, e.state.name);
        if (e.state.type === 'Map' || e.state.type === 'Parallel') this.failed.delete(scoped(scope, e.state.name));
        break;
      case 'StateExited':
        this.stateExited(scope, e);
        break;
      case 'MapIterationStarted':
      case 'MapIterationSucceeded':
      case 'MapIterationFailed':
        this.mapIteration(scope, e);
        break;
      case 'ExecutionSucceeded':
        this.push(scope, 'ExecutionSucceeded', e.timestamp, {
          executionSucceededEventDetails: { output: e[TEXT] ?? json(e.output), outputDetails: data },
        });
        break;
      case 'ExecutionFailed':
        this.push(scope, 'ExecutionFailed', e.timestamp, {
          executionFailedEventDetails: { error: e.Error, cause: causeText(e.Cause) },
        });
        break;
      case 'ExecutionTimeout':
        this.push(scope, 'ExecutionTimedOut', e.timestamp, {
          executionTimedOutEventDetails: { error: 'States.Timeout' },
        });
        break;
      case 'ExecutionAborted':
        this.push(scope, 'ExecutionAborted', e.timestamp, { executionAbortedEventDetails: {} });
        break;
      // StateCaught is followed by the state's StateExited (as in Step Functions); Parallel branch events have no history counterpart.
      default:
        break;
    }
  }

  private stateEntered(scope: number, e: EventOf<'StateEntered'>): void {
    const { type, name } = e.state;
    this.push(scope, `${type}StateEntered` as HistoryEventType, e.timestamp, {
      stateEnteredEventDetails: { name, input: e[TEXT] ?? json(e.state.input), inputDetails: data },
    });
    if (type === 'Task') this.schedule(scope, name);
    if (type === 'Map') {
      const started = this.push(scope, 'MapStateStarted', e.timestamp, { mapStateStartedEventDetails: { length: 0 } });
      this.maps.set(scoped(scope, name), { started, running: new Map() });
    }
    if (type === 'Parallel') this.push(scope, 'ParallelStateStarted', e.timestamp);
  }

  private stateFailed(scope: number, e: EventOf<'StateFailed'>): void {
    const { type, name } = e.state;
    if (type === 'Task') this.settle(scope, name, e.timestamp, { Error: e.Error, Cause: causeText(e.Cause) });
    if (type !== 'Map' && type !== 'Parallel') return;
    const k = scoped(scope, name);
    this.failed.add(k);
    // The interpreter stops the other iterations of a failed Map.
    const running = this.maps.get(k)?.running;
    for (const [iteration, index] of running ?? []) {
      this.push(iteration, 'MapIterationAborted', e.timestamp, { mapIterationAbortedEventDetails: { name, index } });
    }
    running?.clear();
    this.push(scope, `${NESTING[type]}Failed`, e.timestamp);
  }

  private stateExited(scope: number, e: EventOf<'StateExited'>): void {
    const { type, name } = e.state;
    if (type === 'Task') this.settle(scope, name, e.timestamp);
    // A caught Map/Parallel state exits after its `…StateFailed`.
    if ((type === 'Map' || type === 'Parallel') && !this.failed.delete(scoped(scope, name))) {
      this.push(scope, `${NESTING[type]}Succeeded`, e.timestamp);
    }
    this.push(scope, `${type}StateExited` as HistoryEventType, e.timestamp, {
      stateExitedEventDetails: { name, output: e[TEXT] ?? json(e.state.output), outputDetails: data },
    });
  }

  /** A Map iteration's start or end, counted on its Map state's `MapStateStarted`. */
  private mapIteration(scope: number, e: MapIterationEvent): void {
    const details = { name: e.parentState.name, index: e.index };
    const detailsKey = `mapIteration${e.type.slice('MapIteration'.length)}EventDetails` as const;
    this.push(scope, e.type, e.timestamp, { [detailsKey]: details });
    const map = this.maps.get(scoped(this.ctx.parents?.get(scope) ?? 0, e.parentState.name));
    if (!map) return;
    if (e.type !== 'MapIterationStarted') {
      map.running.delete(scope);
      return;
    }
    map.running.set(scope, e.index);
    map.started.mapStateStartedEventDetails = { length: (map.started.mapStateStartedEventDetails?.length ?? 0) + 1 };
  }

  /** Schedule and start the state's next attempt: `LambdaFunction*` events for a function ARN, else `Task*`. */
  private schedule(scope: number, state: string): void {
    const k = scoped(scope, state);
    const inv = this.pending.get(k)?.shift();
    if (!inv) return;
    this.current.set(k, inv);
    const { timeoutInSeconds, heartbeatInSeconds } = this.ctx.timeouts?.[state] ?? {};
    const input = inv.inputText ?? json(inv.input);
    if (inv.kind === 'lambda') {
      this.push(scope, 'LambdaFunctionScheduled', inv.startedAt, {
        lambdaFunctionScheduledEventDetails: {
          resource: inv.resource,
          input,
          inputDetails: data,
          ...(timeoutInSeconds && { timeoutInSeconds }),
        },
      });
      this.push(scope, 'LambdaFunctionStarted', inv.startedAt);
      return;
    }
    const { resourceType, resource } = integration(inv.resource);
    this.push(scope, 'TaskScheduled', inv.startedAt, {
      taskScheduledEventDetails: {
        resourceType,
        resource,
        region: this.ctx.region,
        parameters: input,
        ...(timeoutInSeconds && { timeoutInSeconds }),
        ...(heartbeatInSeconds && { heartbeatInSeconds }),
      },
    });
    this.push(scope, 'TaskStarted', inv.startedAt, { taskStartedEventDetails: { resourceType, resource } });
  }

  /**
   * Report the outcome of the attempt in flight; `failure` is the state's error when it failed
   * (a `States.Timeout` means the attempt was abandoned).
   */
  private settle(scope: number, state: string, at: number, failure?: { Error: string; Cause?: string }): void {
    const k = scoped(scope, state);
    const inv = this.current.get(k);
    if (!inv) return;
    this.current.delete(k);
    const end = inv.endedAt ?? at;
    const lambda = inv.kind === 'lambda';
    const target = lambda ? undefined : integration(inv.resource);
    const timedOut = failure?.Error === 'States.Timeout' || inv.endedAt === undefined;
    if (timedOut) {
      const details = { error: failure?.Error ?? 'States.Timeout', cause: failure?.Cause };
      if (lambda) this.push(scope, 'LambdaFunctionTimedOut', at, { lambdaFunctionTimedOutEventDetails: details });
      else this.push(scope, 'TaskTimedOut', at, { taskTimedOutEventDetails: { ...target!, ...details } });
    } else if (inv.error) {
      const details = { error: inv.error.Error, cause: inv.error.Cause };
      if (lambda) this.push(scope, 'LambdaFunctionFailed', end, { lambdaFunctionFailedEventDetails: details });
      else this.push(scope, 'TaskFailed', end, { taskFailedEventDetails: { ...target!, ...details } });
    } else {
      const succeeded = { output: inv.outputText ?? json(inv.output), outputDetails: data };
      if (lambda) this.push(scope, 'LambdaFunctionSucceeded', end, { lambdaFunctionSucceededEventDetails: succeeded });
      else this.push(scope, 'TaskSucceeded', end, { taskSucceededEventDetails: { ...target!, ...succeeded } });
    }
  }

  /** The event a new event of `scope` follows: the scope's latest, else its nearest ancestor's. */
  private previousOf(scope: number): number {
    for (let s: number | undefined = scope; s !== undefined; s = this.ctx.parents?.get(s)) {
      const id = this.latest.get(s);
      if (id !== undefined) return id;
    }
    return 0;
  }

  private push(scope: number, type: HistoryEventType, at: number, details: Partial<HistoryEvent> = {}): HistoryEvent {
    const id = this.events.length + 1;
    const previousEventId = this.previousOf(scope);
    const event: HistoryEvent = { id, previousEventId, timestamp: new Date(at), type, ...details };
    this.events.push(event);
    this.latest.set(scope, id);
    return event;
  }
}

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
export function toHistoryEvents(
  log: InterpreterEvent[],
  invocations: TaskInvocation[],
  ctx: HistoryContext,
): HistoryEvent[] {
  const history = new HistoryBuilder(invocations, ctx);
  for (const e of log) history.add(e);
  return history.events;
}
