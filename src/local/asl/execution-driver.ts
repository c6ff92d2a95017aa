/**
 * Drives one local execution through the interpreter: its context object and hooks, each Task
 * attempt (the function or override it runs, injected faults, payload quotas, `.waitForTaskToken`
 * pauses), its history (rewritten while it runs, for live views), and what is kept when it ends
 * or pauses.
 */
import { randomUUID } from 'node:crypto';
import type { HistoryEvent } from '@aws-sdk/client-sfn';
import {
  ExecutionAbortedError,
  ExecutionError,
  ExecutionTimeoutError,
  type StateMachine,
} from 'aws-local-stepfunctions';
import type { FunctionHandler, FunctionRegistry } from '../cloud/function-registry.ts';
import { invokeJsonCopy, type LocalFunction, LocalRuntimeFault } from '../cloud/lambda.ts';
import {
  DEFAULT_HISTORY_DIR,
  type ExecutionRecord,
  type ForkParent,
  summarizeExecution,
  writeLocalExecution,
} from '../records/history.ts';
import {
  appendContinued,
  appendResumed,
  type PausedTask,
  type PauseStore,
  type Resolution,
  requestOf,
  suspendedHistory,
  WAIT_FOR_TASK_TOKEN,
} from '../records/pauses.ts';
import { type TaskFault, withFault } from './faults.ts';
import { type InterpreterEvent, integration, type TaskInvocation, toHistoryEvents } from './history-events.ts';
import { EXECUTION, type ExecutionHooks, HOOKS, type HookedRunOptions, type TaskHandler } from './interpreter.ts';
import { checkStatePayload, PAYLOAD_LIMIT_BYTES, TaskResultTooLargeError, textBytes } from './limits.ts';
import { LAMBDA_INVOKE, type LoadedStateMachine, type TaskTarget } from './state-machines.ts';
import { instantWaits, type SessionClock, sessionClock, waitEnd } from './waits.ts';

export interface ExecutionDriverOptions {
  /**
   * Replace Task states by name (in every state machine, at any depth) with scripted handlers. They
   * are wrapped like real functions: JSON in and out, thrown errors become `Error` = the error's name.
   */
  handlerOverrides?: Record<string, TaskHandler>;
  /**
   * Where each execution is stored as `<name>.json`; `false` stores nothing. @default DEFAULT_HISTORY_DIR
   * (`.stepwise/executions` in the repository)
   */
  historyDir?: string | false;
  /**
   * Wait this many milliseconds before every retry instead of the ASL backoff. @default the ASL's
   * IntervalSeconds/BackoffRate/jitter
   */
  retryDelayMs?: number;
  /**
   * Local stand-ins for service integrations (at any depth), by Task `Resource` (e.g.
   * `arn:aws:states:::events:putEvents` → the local bus): each gets the Task's effective input and
   * returns what the integration would. Task overrides by state name take precedence.
   */
  serviceIntegrations?: Record<string, TaskHandler>;
  /**
   * Faults to inject, by Task state name (at any depth, in every state machine): an error typed by
   * name (Retry/Catch match it), latency, a Lambda timeout, or a crash after the handler ran — for
   * every attempt or the first `times` attempts of each execution. A name that is no Task state of
   * the app is refused when the runtime is created.
   * @example faults: { 'b-lookup': { error: { name: 'ModelThrottledError' }, times: 2 } }
   * @default no faults
   */
  faults?: Record<string, TaskFault>;
  /** The clock Wait states move instead of sleeping (see waits.ts). @default a clock at the real time when the runtime starts */
  clock?: SessionClock;
}

/** A finished local execution: the stored record plus its history under the SDK's name. */
export interface LocalExecution extends ExecutionRecord {
  /** `RUNNING`: paused at a `.waitForTaskToken` Task (see `pause`). */
  status: 'SUCCEEDED' | 'FAILED' | 'TIMED_OUT' | 'ABORTED' | 'RUNNING';
  /** The `GetExecutionHistory` events (the same array as `events`). */
  history: HistoryEvent[];
  /** The paused Task, when the execution waits for `resumeExecution`. */
  pause?: PausedTask;
  /** For a resumed execution: how its paused Task ended (`timeout` also when the output came after the deadline). */
  resumedWith?: 'output' | 'error' | 'timeout';
}

/**
 * The execution a run belongs to. A resumed run's or a fork's events continue the history they are
 * given (`dropped`: how many of their first events repeat it; a resumed run's are found in its events).
 */
export type DrivenExecution = Pick<PausedTask, 'executionArn' | 'name' | 'executionInput' | 'startTime'> & {
  events?: HistoryEvent[];
  dropped?: number;
};

/**
 * How a run continues an earlier one: the paused Task a resumed run starts with and how it ends,
 * or the execution a fork branches from.
 */
export interface RunContinuation {
  resume?: { state: string; resolution: Resolution };
  parent?: ForkParent;
}

/** How often a running execution's record is rewritten while it runs (Studio's live view reads it). */
const PROGRESS_WRITE_MS = 200;

/** What one execution keeps while it runs. */
interface ExecutionRun {
  sm: LoadedStateMachine;
  invocations: TaskInvocation[];
  /** Attempts so far per Task state, for `faults[state].times`. */
  attempts: Map<string, number>;
  /** Parent scope of each scope (the root execution, Map iterations, Parallel branches). */
  parents: Map<number, number | undefined>;
  /** The last input of each state, by name (a paused Task's is what its resumed run starts from). */
  stateInputs: Map<string, unknown>;
  /** A resumed run: how its first state, the paused Task, ends. */
  resume?: RunContinuation['resume'];
  /** Set when a `.waitForTaskToken` Task suspended the run. */
  suspended?: { state: string; parameters: unknown };
  /** The local `$$.Task.Token` of this run. */
  taskToken: string;
  abort?: () => void;
}

/** Runs executions of the app's state machines, with its functions, pauses and options. */
export class ExecutionDriver {
  /** The clock Wait states move. */
  readonly clock: SessionClock;

  constructor(
    private readonly functions: FunctionRegistry,
    private readonly pauses: PauseStore,
    private readonly options: ExecutionDriverOptions,
  ) {
    this.clock = options.clock ?? sessionClock();
  }

  /**
   * Run `machine` (the state machine's ASL, or a copy starting at a paused Task or a fork's state)
   * on `input` until it ends or pauses, then build, store and return the execution. While it runs,
   * its record is rewritten every {@link PROGRESS_WRITE_MS} as `RUNNING`, so another process sees
   * it progress.
   */
  async drive(
    sm: LoadedStateMachine,
    machine: StateMachine,
    input: unknown,
    execution: DrivenExecution,
    { resume, parent }: RunContinuation = {},
  ): Promise<LocalExecution> {
    const run: ExecutionRun = {
      sm,
      invocations: [],
      attempts: new Map(),
      parents: new Map(),
      stateInputs: new Map(),
      taskToken: `local:${execution.name}:${randomUUID()}`,
      ...(resume && { resume }),
    };
    // Run it, its record rewritten as it progresses.
    const started = machine.run(input as Parameters<StateMachine['run']>[0], this.runOptions(run, execution));
    run.abort = () => started.abort();
    const historyOf = this.historyOf(run, execution);
    const store = (record: ExecutionRecord) => this.store(record, parent);
    const progress =
      this.options.historyDir === false
        ? undefined
        : progressWriter((log) => store(summarizeExecution(execution.executionArn, historyOf(log))));
    const log = collect(started.eventLogs, progress?.update);
    await ended(started.result, run, progress);
    // Its record, stored; a suspended run is kept as a pause, and a resumed run's pause is done.
    const events = historyOf(await log);
    const history = run.suspended ? suspendedHistory(events, run.suspended.state) : events;
    const record = summarizeExecution(execution.executionArn, history);
    dropDefaultFailCause(record, sm);
    store(record);
    const pause = run.suspended ? this.suspend(run, run.suspended, record, execution) : undefined;
    if (!pause && resume) this.pauses.delete(execution.name);
    const status = record.status as LocalExecution['status'];
    return { ...record, status, history: record.events, ...(pause && { pause }), ...(parent && { parent }) };
  }

  /** The interpreter's run options: the context object, the retry delay override and the hooks. */
  private runOptions(run: ExecutionRun, execution: DrivenExecution): HookedRunOptions {
    const { sm } = run;
    const retryDelayMs = this.options.retryDelayMs;
    const retried = [...sm.states].filter(([, s]) => 'Retry' in s).map(([name]) => name);
    const retryIntervalOverrides =
      retryDelayMs === undefined ? undefined : Object.fromEntries(retried.map((name) => [name, retryDelayMs]));
    // Nothing sleeps locally: a Wait state moves the clock instead (see hooks).
    return {
      overrides: {
        waitTimeOverrides: instantWaits(sm.states),
        ...(retryIntervalOverrides && { retryIntervalOverrides }),
      },
      context: {
        Execution: {
          Id: execution.executionArn,
          Name: execution.name,
          RoleArn: sm.roleArn,
          RedriveCount: 0,
          [EXECUTION]: { Input: execution.executionInput, StartTime: execution.startTime },
        },
        StateMachine: { Id: sm.arn, Name: sm.name },
        Task: { Token: run.taskToken },
      },
      [HOOKS]: this.hooks(run),
    };
  }

  /** The interpreter hooks of one execution: every execution it starts (Map iteration, Parallel branch) gets a scope and the runtime's Task handlers. */
  private hooks(run: ExecutionRun): ExecutionHooks {
    return {
      open: (parent) => {
        const scope = run.parents.size;
        run.parents.set(scope, parent);
        return scope;
      },
      // Every name the interpreter asks for gets a handler, so it never falls back to calling AWS Lambda.
      handlers: (scope) =>
        new Proxy({} as Record<string, TaskHandler>, {
          get: (_, state) =>
            typeof state === 'string' ? (event: unknown) => this.invoke(state, event, run, scope) : undefined,
        }),
      entered: (state, input, text) => {
        checkStatePayload(state, 'input', text);
        run.stateInputs.set(state, input);
        const definition = run.sm.states.get(state);
        if (definition?.Type === 'Wait') this.clock.advanceTo(waitEnd(definition, input, this.clock.now()));
      },
      exiting: (state, _output, text) => checkStatePayload(state, 'output', text),
    };
  }

  /** The history of the run from an interpreter log so far, after the history the execution continues. */
  private historyOf(run: ExecutionRun, execution: DrivenExecution): (log: InterpreterEvent[]) => HistoryEvent[] {
    const { sm } = run;
    const timeouts = Object.fromEntries([...sm.targets].map(([state, t]) => [state, t.timeouts]));
    return (log) => {
      const context = { roleArn: sm.roleArn, region: sm.region, timeouts, parents: run.parents };
      const events = toHistoryEvents(log, run.invocations, context);
      const { events: before, dropped } = execution;
      if (!before) return events;
      return dropped === undefined ? appendResumed(before, events) : appendContinued(before, events, dropped);
    };
  }

  /** Store the record in the history folder, naming the fork's parent; nothing when `historyDir` is `false`. */
  private store(record: ExecutionRecord, parent: ForkParent | undefined): void {
    const historyDir = this.options.historyDir;
    if (historyDir === false) return;
    writeLocalExecution(parent ? { ...record, parent } : record, historyDir ?? DEFAULT_HISTORY_DIR);
  }

  /** Keep the suspended run as a paused Task, for `resumeExecution` in this or a later process. */
  private suspend(
    run: ExecutionRun,
    suspended: NonNullable<ExecutionRun['suspended']>,
    record: ExecutionRecord,
    execution: DrivenExecution,
  ): PausedTask {
    const { sm } = run;
    const { state, parameters } = suspended;
    const { timeoutInSeconds, heartbeatInSeconds } = sm.targets.get(state)!.timeouts;
    const now = new Date().toISOString();
    const pause: PausedTask = {
      executionArn: execution.executionArn,
      name: execution.name,
      stateMachine: sm.arn,
      stack: sm.stack,
      ...(record.workflow && { workflow: record.workflow }),
      state,
      stateInput: run.stateInputs.get(state),
      request: requestOf(parameters),
      taskToken: run.taskToken,
      pausedAt: now,
      lastHeartbeatAt: now,
      ...(timeoutInSeconds && { timeoutSeconds: timeoutInSeconds }),
      ...(heartbeatInSeconds && { heartbeatSeconds: heartbeatInSeconds }),
      executionInput: execution.executionInput,
      startTime: execution.startTime,
      events: record.events,
    };
    this.pauses.save(pause);
    return pause;
  }

  /**
   * Run one attempt of a Task of the execution's scope `scope`, recording it for the history. Its
   * input (after `Parameters`) over the payload quota ends the execution before anything runs.
   */
  private async invoke(state: string, event: unknown, run: ExecutionRun, scope: number): Promise<any> {
    const target = run.sm.targets.get(state);
    if (!target) throw new LocalRuntimeFault(`"${state}" is not a Task state of ${run.sm.stack}/${run.sm.logicalId}`);
    // One JSON text of the input for the quota, the history and the function's copy of it.
    const inputText = JSON.stringify(event ?? null);
    checkStatePayload(state, 'input', inputText);
    const { kind, resource } = target;
    const invocation: TaskInvocation = { state, scope, kind, resource, input: event, inputText, startedAt: Date.now() };
    run.invocations.push(invocation);
    try {
      if (WAIT_FOR_TASK_TOKEN.test(resource) && !this.options.handlerOverrides?.[state]) {
        return await this.waitForTaskToken(state, event, run, scope, invocation);
      }
      const { output, outputText } = await this.runHandler(state, target, event, inputText, run);
      invocation.output = output;
      invocation.outputText = outputText;
      return output;
    } catch (e) {
      invocation.error = { Error: (e as Error).name, Cause: (e as Error).message };
      throw e;
    } finally {
      invocation.endedAt = Date.now();
    }
  }

  /**
   * Run the Task's handler (its override, else its function's) on a JSON copy of its input, with
   * the fault of this attempt injected, like Lambda: a `lambda:invoke` Task gets the `Payload` and
   * its output is wrapped as the integration's.
   * @throws TaskResultTooLargeError when the result is over the payload quota.
   */
  private async runHandler(
    state: string,
    target: TaskTarget,
    event: unknown,
    inputText: string,
    run: ExecutionRun,
  ): Promise<{ output: unknown; outputText: string }> {
    const lambdaInvoke = LAMBDA_INVOKE.test(target.resource);
    // `FunctionName.$` is only known once Parameters are applied.
    const functionName = lambdaInvoke ? (event as { FunctionName?: unknown }).FunctionName : undefined;
    const named = typeof functionName === 'string' ? this.functions.keyOf(functionName, run.sm.stack) : undefined;
    const functionKey = target.functionKey ?? named;
    const override = this.options.handlerOverrides?.[state] ?? this.options.serviceIntegrations?.[target.resource];
    const fn: LocalFunction = functionKey
      ? this.functions.get(functionKey)
      : { name: state, arn: target.resource, memoryMB: 128 };
    let handler: FunctionHandler;
    if (override) handler = override;
    else if (functionKey) handler = await this.functions.handler(functionKey);
    else {
      const pass = `pass handlerOverrides["${state}"] or serviceIntegrations["${target.resource}"]`;
      throw new LocalRuntimeFault(`Task "${state}": no local handler for resource ${target.resource} (${pass})`);
    }
    const fault = this.faultOf(state, run);
    const copy = JSON.parse(inputText) as { Payload?: unknown };
    const payload = lambdaInvoke ? (copy.Payload ?? null) : copy;
    const result = await invokeJsonCopy(fault ? withFault(handler, fault) : handler, payload, fn);
    if (textBytes(result.text) > PAYLOAD_LIMIT_BYTES) {
      const resource = target.kind === 'lambda' ? target.resource : integration(target.resource).resourceType;
      throw new TaskResultTooLargeError(resource);
    }
    if (!lambdaInvoke) return { output: result.value, outputText: result.text };
    return {
      output: { ExecutedVersion: '$LATEST', Payload: result.value, StatusCode: 200 },
      outputText: `{"ExecutedVersion":"$LATEST","Payload":${result.text},"StatusCode":200}`,
    };
  }

  /**
   * A `.waitForTaskToken` Task: in a resumed run, the paused Task ends as resolved (output, or a
   * thrown error typed by name for Retry/Catch); otherwise the run is suspended (aborted, and
   * persisted by `drive`).
   */
  private async waitForTaskToken(
    state: string,
    event: unknown,
    run: ExecutionRun,
    scope: number,
    invocation: TaskInvocation,
  ): Promise<unknown> {
    if (run.resume?.state === state) {
      const { resolution } = run.resume;
      run.resume = undefined;
      if ('output' in resolution) {
        invocation.output = resolution.output;
        return resolution.output;
      }
      const [name, cause] =
        'timeout' in resolution
          ? ['States.Timeout', `${state}: timed out`]
          : [resolution.error, resolution.cause ?? ''];
      throw Object.assign(new Error(cause), { name });
    }
    if (scope !== 0)
      throw new LocalRuntimeFault(
        `Task "${state}": a .waitForTaskToken Task inside a Map iteration or Parallel branch cannot pause locally`,
      );
    run.suspended = { state, parameters: event };
    // Abort once the interpreter has logged this attempt, then settle it: the interpreter clears its
    // Task timer only when the attempt settles, and runs no further state of an aborted execution.
    return new Promise((settle) =>
      setImmediate(() => {
        run.abort?.();
        setImmediate(() => settle(null));
      }),
    );
  }

  /** The fault to inject into this attempt of `state`, if any (counting the state's attempts in this execution). */
  private faultOf(state: string, run: ExecutionRun): TaskFault | undefined {
    const fault = this.options.faults?.[state];
    if (!fault) return undefined;
    const attempt = (run.attempts.get(state) ?? 0) + 1;
    run.attempts.set(state, attempt);
    return attempt <= (fault.times ?? Infinity) ? fault : undefined;
  }
}

/**
 * Wait for the run's result. An execution that failed, timed out, or was aborted to suspend it
 * has ended (its history says how); any other error is a fault of the runtime and is thrown.
 * The progress writer stops either way.
 */
async function ended(result: Promise<unknown>, run: ExecutionRun, progress?: { stop: () => void }): Promise<void> {
  try {
    await result;
  } catch (e) {
    const suspended = e instanceof ExecutionAbortedError && run.suspended;
    if (!(e instanceof ExecutionError || e instanceof ExecutionTimeoutError || suspended)) throw e;
  } finally {
    progress?.stop();
  }
}

/** Drain the interpreter's event log (Array.fromAsync needs Node 22), telling `onEvent` the log so far after each event. */
async function collect(
  events: AsyncGenerator<InterpreterEvent>,
  onEvent?: (log: InterpreterEvent[]) => void,
): Promise<InterpreterEvent[]> {
  const all: InterpreterEvent[] = [];
  for await (const e of events) {
    all.push(e);
    onEvent?.(all);
  }
  return all;
}

/**
 * Calls `write` with the latest log at most every {@link PROGRESS_WRITE_MS} (the first at once),
 * until `stop`: the final record is written after it, and nothing overwrites it.
 */
function progressWriter(write: (log: InterpreterEvent[]) => void): {
  update: (log: InterpreterEvent[]) => void;
  stop: () => void;
} {
  let timer: NodeJS.Timeout | undefined;
  let latest: InterpreterEvent[] | undefined;
  let last = 0;
  let stopped = false;
  const flush = () => {
    timer = undefined;
    if (stopped || !latest) return;
    last = Date.now();
    write(latest);
  };
  return {
    update: (log) => {
      latest = log;
      if (timer || stopped) return;
      timer = setTimeout(flush, Math.max(0, last + PROGRESS_WRITE_MS - Date.now()));
    },
    stop: () => {
      stopped = true;
      clearTimeout(timer);
    },
  };
}

/**
 * The interpreter reports a default cause for a Fail state without `Cause`; Step Functions reports none.
 */
function dropDefaultFailCause(record: ExecutionRecord, sm: LoadedStateMachine): void {
  const lastState = [...record.events].reverse().find((e) => e.type?.endsWith('StateEntered'));
  const state = lastState && sm.states.get(lastState.stateEnteredEventDetails!.name!);
  if (record.error && state?.Type === 'Fail' && state.Cause === undefined && state.CausePath === undefined) {
    delete record.error.Cause;
    const failed = record.events.at(-1)?.executionFailedEventDetails;
    if (failed) delete failed.cause;
  }
}
