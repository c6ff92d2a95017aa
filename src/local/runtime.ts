/**
 * The local runtime: runs the SAME synthesized ASL as Step Functions in an in-process interpreter
 * (aws-local-stepfunctions), with every Task mapped back to the handler module its Lambda deploys.
 *
 * Fidelity, beyond the interpreter as shipped (see interpreter.ts, limits.ts, faults.ts):
 * - Every Task at any depth (Map ItemProcessor/Iterator, Parallel Branches) runs locally; a Task the
 *   runtime cannot map fails the execution with `States.Runtime` naming the state and resource (no
 *   Catch sees it). The interpreter never calls AWS.
 * - Task timeouts are the ASL's `TimeoutSeconds`/`HeartbeatSeconds` (`States.Timeout`), none when it
 *   declares none; a function running past its template `Timeout` fails with `Sandbox.Timedout`.
 * - The 256 KiB payload quota: a Task result over it is a catchable `States.DataLimitExceeded` task
 *   failure; a state input or output over it ends the execution with `States.DataLimitExceeded`.
 * - Map items that are falsy (`0`, `false`, `""`, `null`) work, and `$$.Execution.Input`/`StartTime`
 *   inside iterations and branches are the execution's; the history shows Map and Parallel
 *   states (`MapStateStarted`, `MapIteration*`, `ParallelStateStarted`...) and each iteration's Tasks.
 * - `faults` inject errors, latency, timeouts and crashes after side effects into chosen Tasks.
 *
 * - `.waitForTaskToken` Tasks suspend the execution (persisted under `.stepwise/pauses/`) until
 *   {@link LocalRuntime.resumeExecution} in any later process; see pauses.ts.
 *
 * Remaining limits:
 * - Inline Map only (a distributed Map is refused; no ToleratedFailure*); no `.sync` patterns,
 *   no activities, no `$$.State.*`.
 * - `HeartbeatSecondsPath` is ignored and `TimeoutSecondsPath` is the interpreter's; local tasks
 *   cannot send heartbeats, so `HeartbeatSeconds` acts as a deadline (`States.Timeout`, which a
 *   `States.HeartbeatTimeout` Retry/Catch also matches).
 * - A timed-out handler cannot be stopped: it runs on in the background (as a Lambda would until its
 *   sandbox is torn down) and its late side effects still happen.
 * - An execution input over 256 KiB fails the execution when its first state is entered (the
 *   StartExecution API would refuse it).
 */
// aws-local-stepfunctions needs Promise.withResolvers (Node 22); load the polyfill before it runs anything.
import './polyfills.ts';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { App } from 'aws-cdk-lib';
import { ExecutionAlreadyExists, ExecutionDoesNotExist, StateMachineDoesNotExist, type HistoryEvent } from '@aws-sdk/client-sfn';
import { ExecutionAbortedError, ExecutionError, ExecutionTimeoutError, StateMachine, type StateMachineDefinition } from 'aws-local-stepfunctions';
import type { HandlerFactory } from '../core/env.ts';
import { STATEMACHINES_DIR } from '../core/paths.ts';
import { engineEntry } from '../cdk/constructs/lambda-entry.ts';
import { ENTRY_METADATA, LAMBDA_STATEMACHINES_DIR } from '../cdk/metadata.ts';
import { integration, toHistoryEvents, type InterpreterEvent, type TaskInvocation } from './event-log.ts';
import { validateFault, withFault, type TaskFault } from './faults.ts';
import { DEFAULT_HISTORY_DIR, parseExecutionArn, summarizeExecution, writeLocalExecution, type ExecutionRecord, type ForkParent } from './history.ts';
import {
  allStates,
  EXECUTION,
  HOOKS,
  installInterpreterHooks,
  interpreterDefinition,
  taskTimeouts,
  type ExecutionHooks,
  type HookedRunOptions,
  type TaskHandler,
  type TaskTimeouts,
} from './interpreter.ts';
import { invokeJsonCopy, invokeLikeLambda, LocalRuntimeFault, type LocalFunction } from './lambda.ts';
import { checkStatePayload, PAYLOAD_LIMIT_BYTES, textBytes, TaskResultTooLargeError } from './limits.ts';
import {
  DEFAULT_PAUSES_DIR,
  PauseStore,
  WAIT_FOR_TASK_TOKEN,
  appendContinued,
  appendResumed,
  checkExecutionName,
  expiredAt,
  requestOf,
  suspendedHistory,
  type PausedTask,
  type Resolution,
} from './pauses.ts';
import { synthesize, synthProject, type SynthesizedApp, type SynthesizedStateMachine } from './synth.ts';
import { arnToLogicalId, LOCAL_ACCOUNT, LOCAL_REGION, resolveTokens, type CfnResource, type TokenContext } from './tokens.ts';

export type { TaskHandler } from './interpreter.ts';
export type { TaskFault } from './faults.ts';

export interface LocalRuntimeOptions {
  /** Project environment to synthesize (`buildStepwiseApp` with `getEnvConfig(env)`), when `app` is not given. @default 'dev' */
  env?: string;
  /** Run this app instead of the project's: a `synthesize()` result, or a function that builds stacks into the app. */
  app?: SynthesizedApp | ((app: App) => void);
  /** Local adapters passed to every `createHandler(env, services)`. */
  services?: unknown;
  /**
   * Replace Task states by name (in every state machine, at any depth) with scripted handlers. They
   * are wrapped like real functions: JSON in and out, thrown errors become `Error` = the error's name.
   */
  handlerOverrides?: Record<string, TaskHandler>;
  /** Where each execution is stored as `<name>.json`; `false` stores nothing. @default DEFAULT_HISTORY_DIR (`.stepwise/executions` in the repository) */
  historyDir?: string | false;
  /** Wait this many milliseconds before every retry instead of the ASL backoff. @default the ASL's IntervalSeconds/BackoffRate/jitter */
  retryDelayMs?: number;
  /** DynamoDB Local: its endpoint becomes `AWS_ENDPOINT_URL_DYNAMODB` of every function. */
  dynamo?: { endpoint: string };
  /** Added to (and overriding) every function's environment. */
  extraEnv?: Record<string, string>;
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
  /** Where executions paused at a `.waitForTaskToken` Task are kept for `resumeExecution`; `false` keeps them in memory. @default `.stepwise/pauses` when `historyDir` is not `false`, else memory */
  pausesDir?: string | false;
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

export interface StartExecutionOptions {
  /** The execution name (unique per Standard state machine, like Step Functions). @default a UUID */
  name?: string;
}

/** A fork: a new execution that runs the state machine from one of its states, continuing a recorded history. */
export interface ForkExecutionOptions {
  /** The state the fork starts at (a step's first state). */
  state: string;
  /** That state's input: the state at that point, as recorded or edited. */
  stateInput: unknown;
  /** The new execution's name. */
  name: string;
  /** The parent's events before that state: the fork's history starts with them. */
  history: HistoryEvent[];
  /** `$$.Execution.Input` of the fork: the parent's execution input. */
  executionInput: unknown;
  parent: ForkParent;
}

/** How often a running execution's record is rewritten while it runs (Studio's live view reads it). */
const PROGRESS_WRITE_MS = 200;

/** A Task's target: a function (by ARN, or through the `lambda:invoke` integration) or something only an override can run. */
interface TaskTarget {
  kind: TaskInvocation['kind'];
  resource: string;
  /** `stack/logicalId` of the function, when the resource names one in the template. */
  functionKey?: string;
  timeouts: TaskTimeouts;
}

interface LoadedFunction extends LocalFunction {
  entry?: string;
  env: Record<string, string>;
  handler?: Promise<(event: any, context: unknown) => unknown>;
}

interface LoadedStateMachine extends SynthesizedStateMachine {
  /** Built on the first execution. */
  machine?: StateMachine;
  roleArn: string;
  /** Every state at any depth, by name (names are unique across a whole state machine). */
  states: Map<string, { Type: string } & Record<string, unknown>>;
  /** Every Task state at any depth, by name. */
  targets: Map<string, TaskTarget>;
  /** Distributed Map states (ItemReader, ResultWriter, Mode DISTRIBUTED): the interpreter would run them as inline Maps, wrongly. */
  distributedMaps: string[];
}

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
  resume?: { state: string; resolution: Resolution };
  /** Set when a `.waitForTaskToken` Task suspended the run. */
  suspended?: { state: string; parameters: unknown };
  abort?: () => void;
}

const LAMBDA_INVOKE = /^arn:aws[a-z-]*:states:::lambda:invoke$/;

/**
 * Map the bundled workflow folder (`/var/task/statemachines`) to the repository's `statemachines/`.
 * A workflow folder elsewhere (a test fixture) needs `extraEnv.STATEMACHINES_DIR`: the template
 * does not say where the bundled folder came from.
 */
function localPath(value: string): string {
  return value === LAMBDA_STATEMACHINES_DIR || value.startsWith(`${LAMBDA_STATEMACHINES_DIR}/`)
    ? join(STATEMACHINES_DIR, value.slice(LAMBDA_STATEMACHINES_DIR.length))
    : value;
}

/**
 * Runs the state machines of a synthesized app locally.
 *
 * - The definitions are the deployed ASL (tokens resolved); each is validated (once per process)
 *   and its interpreter built on its first execution, then reused.
 * - Each Task's Resource (a function ARN, or `lambda:invoke` with `FunctionName`) maps to the
 *   function's logical id → its `stepwise:entry` module → `createHandler(env, services)`, created
 *   once per function, where `env` is the function's resolved environment plus `AWS_REGION`,
 *   `AWS_LAMBDA_FUNCTION_NAME`, X-Ray tracing and EMF metrics switched off (no daemon, and EMF
 *   would mix into a CLI's stdout), the DynamoDB Local endpoint and `extraEnv`.
 * - Handlers are invoked like Lambda: JSON in/out; a thrown error surfaces with `Error` = its
 *   `name` and `Cause` = `{"errorType","errorMessage","trace"}` so Retry/Catch match typed errors.
 * - Context object: `$$.Execution.{Id,Name,StartTime,Input,RoleArn,RedriveCount}` and
 *   `$$.StateMachine.{Id,Name}`, and a local `$$.Task.Token` per run. Not available: `$$.State.*`.
 * - See the module comment for timeouts, payload quotas, faults and the remaining limits.
 *
 * @example
 * const runtime = await LocalRuntime.create({ services, dynamo: { endpoint: ddb.endpoint } });
 * const execution = await runtime.startExecution('support-desk', input, { name });
 */
export class LocalRuntime {
  /** The state machines this runtime can start. */
  readonly stateMachines: readonly SynthesizedStateMachine[];
  private readonly machines: LoadedStateMachine[];
  private readonly functions = new Map<string, LoadedFunction>();
  private readonly startedNames = new Set<string>();
  private readonly pauses: PauseStore;

  private constructor(
    private readonly synthesized: SynthesizedApp,
    private readonly options: LocalRuntimeOptions,
  ) {
    this.machines = synthesized.stateMachines.map((sm) => this.load(sm));
    this.pauses = new PauseStore(options.pausesDir ?? (options.historyDir === false ? false : DEFAULT_PAUSES_DIR));
    this.stateMachines = synthesized.stateMachines;
    for (const [state, fault] of Object.entries(options.faults ?? {})) {
      const targets = this.machines.flatMap((m) => m.targets.get(state) ?? []);
      if (!targets.length) throw new LocalRuntimeFault(`faults["${state}"]: no Task state "${state}" in the app`);
      const canTimeOut = targets.every((t) => t.functionKey || LAMBDA_INVOKE.test(t.resource) || t.timeouts.timeoutInSeconds || t.timeouts.heartbeatInSeconds);
      validateFault(state, fault, Boolean(canTimeOut));
    }
  }

  /**
   * Synthesize (or take) the app and prepare every state machine. Handler modules are imported
   * on the first invocation of their function.
   */
  static async create(options: LocalRuntimeOptions = {}): Promise<LocalRuntime> {
    installInterpreterHooks();
    const app = options.app;
    const synthesized = app === undefined ? await synthProject(options.env) : typeof app === 'function' ? synthesize(app, { env: options.env }) : app;
    if (options.dynamo && !process.env.AWS_ACCESS_KEY_ID && !process.env.AWS_PROFILE) {
      // Handlers build SDK clients with the default credential chain; DynamoDB Local accepts any key.
      process.env.AWS_ACCESS_KEY_ID = 'local';
      process.env.AWS_SECRET_ACCESS_KEY = 'local';
    }
    return new LocalRuntime(synthesized, options);
  }

  /**
   * Find a state machine by workflow name, logical id, name or ARN.
   * @throws StateMachineDoesNotExist listing the known ones.
   */
  stateMachine(ref: string): SynthesizedStateMachine {
    return this.find(ref);
  }

  /**
   * Run an execution to its end and return it (`StartExecution` + waiting, or `StartSyncExecution`
   * for Express machines). The record is also stored in `historyDir`.
   * @throws ExecutionAlreadyExists when a Standard state machine already ran an execution with this name on this runtime.
   * @throws InvalidName for a name Step Functions would refuse.
   * @throws LocalRuntimeFault when the state machine has a distributed Map state.
   */
  async startExecution(stateMachine: string, input: unknown = {}, options: StartExecutionOptions = {}): Promise<LocalExecution> {
    const sm = this.find(stateMachine);
    if (sm.distributedMaps.length) {
      throw new LocalRuntimeFault(`state machine ${sm.stack}/${sm.logicalId}: distributed Map state "${sm.distributedMaps.join('", "')}" cannot run locally (inline Map only)`);
    }
    const machine = (sm.machine ??= interpreterFor(sm.definition));
    const name = options.name ?? randomUUID();
    checkExecutionName(name);
    const key = `${sm.arn}|${name}`;
    // Express executions have no name uniqueness in Step Functions either.
    if (sm.type === 'STANDARD') {
      if (this.startedNames.has(key)) {
        throw new ExecutionAlreadyExists({ $metadata: {}, message: `Execution Already Exists: '${this.executionArn(sm, name)}'` });
      }
      this.startedNames.add(key);
    }
    const executionArn = this.executionArn(sm, name);
    const executionInput = JSON.parse(JSON.stringify(input ?? null));
    return this.drive(sm, machine, executionInput, { executionArn, name, executionInput, startTime: new Date().toISOString() });
  }

  /**
   * `SendTaskSuccess` / `SendTaskFailure` for a local execution paused at a `.waitForTaskToken`
   * Task (by name or ARN), in this or any later process: runs the same ASL from the paused Task on
   * (see pauses.ts). Past the Task's timeout the resolution is its `States.Timeout` instead, as in
   * Step Functions (where the late call fails with `TaskTimedOut`): `resumedWith` says which.
   * The pause is claimed first (see `PauseStore.claim`): of concurrent resumers of one execution,
   * in this process or others, exactly one runs it on.
   * @throws ExecutionDoesNotExist when no execution of that name is paused (or another resumer already ran it).
   * @throws ExecutionClaimedError while another resumer runs it.
   * @throws InvalidName for a name that is not an execution name, before any file is read.
   */
  async resumeExecution(nameOrArn: string, resolution: Resolution, options: { now?: Date } = {}): Promise<LocalExecution> {
    const release = this.pauses.claim(this.pausedName(nameOrArn));
    try {
      // Read under the claim: a resumer that finished first has deleted it.
      const paused = this.paused(nameOrArn);
      const sm = this.machines.find((m) => m.stack === paused.stack && m.arn === paused.stateMachine);
      if (!sm) throw new StateMachineDoesNotExist({ $metadata: {}, message: `${paused.name}: its state machine ${paused.stack}/${paused.stateMachine} is not in this app` });
      const expired = expiredAt(paused, options.now ?? new Date());
      const effective: Resolution = expired ? { error: expired.error, cause: expired.cause } : resolution;
      const definition = { ...interpreterDefinition(sm.definition), StartAt: paused.state };
      const machine = new StateMachine(definition, { validationOptions: { noValidate: true } });
      const execution = await this.drive(sm, machine, paused.stateInput, paused, { state: paused.state, resolution: effective });
      return { ...execution, resumedWith: expired || 'timeout' in resolution ? 'timeout' : 'output' in resolution ? 'output' : 'error' };
    } finally {
      release();
    }
  }

  /**
   * Fork an execution: run the state machine from `options.state` with `options.stateInput`, as a
   * new execution whose history continues the parent's events before that state (ids renumbered)
   * and whose record names its parent. The same ASL runs as for any execution: only `StartAt` differs.
   * @throws LocalRuntimeFault when the state is not a top-level state of the state machine.
   */
  async forkExecution(stateMachine: string, options: ForkExecutionOptions): Promise<LocalExecution> {
    const sm = this.find(stateMachine);
    if (!(options.state in sm.definition.States)) throw new LocalRuntimeFault(`"${options.state}" is not a top-level state of ${sm.stack}/${sm.logicalId}: a fork starts at one`);
    checkExecutionName(options.name);
    const machine = new StateMachine({ ...interpreterDefinition(sm.definition), StartAt: options.state }, { validationOptions: { noValidate: true } });
    const execution = {
      executionArn: this.executionArn(sm, options.name),
      name: options.name,
      executionInput: options.executionInput,
      startTime: options.history[0]?.timestamp ? new Date(options.history[0].timestamp).toISOString() : new Date().toISOString(),
      events: options.history,
      dropped: 1,
    };
    return this.drive(sm, machine, JSON.parse(JSON.stringify(options.stateInput ?? null)), execution, undefined, options.parent);
  }

  /** `SendTaskHeartbeat` for a paused local execution (see {@link PauseStore.heartbeat}). */
  heartbeat(nameOrArn: string, now: Date = new Date()): PausedTask {
    return this.pauses.heartbeat(this.paused(nameOrArn).name, now);
  }

  /** Executions paused at a `.waitForTaskToken` Task, oldest first. */
  pausedExecutions(): PausedTask[] {
    return this.pauses.list();
  }

  private pausedName(nameOrArn: string): string {
    return nameOrArn.startsWith('arn:') ? parseExecutionArn(nameOrArn).name : nameOrArn;
  }

  private paused(nameOrArn: string): PausedTask {
    const paused = this.pauses.get(this.pausedName(nameOrArn));
    if (!paused) throw new ExecutionDoesNotExist({ $metadata: {}, message: `no paused local execution "${nameOrArn}" (stepwise executions lists them)` });
    return paused;
  }

  /**
   * Run `machine` (the state machine's ASL, or a copy starting at a paused Task or a fork's state)
   * on `input` until it ends or pauses, then build, store and return the execution; a resumed run's
   * or a fork's events continue the history they were given (`dropped`: how many of their first
   * events repeat it; a resumed run's are found in its events). While it runs, its record is
   * rewritten every {@link PROGRESS_WRITE_MS} as `RUNNING`, so another process sees it progress.
   */
  private async drive(
    sm: LoadedStateMachine,
    machine: StateMachine,
    input: unknown,
    execution: Pick<PausedTask, 'executionArn' | 'name' | 'executionInput' | 'startTime'> & { events?: HistoryEvent[]; dropped?: number },
    resume?: ExecutionRun['resume'],
    parent?: ForkParent,
  ): Promise<LocalExecution> {
    const { executionArn, name } = execution;
    const run: ExecutionRun = { sm, invocations: [], attempts: new Map(), parents: new Map(), stateInputs: new Map(), ...(resume && { resume }) };
    const retryDelayMs = this.options.retryDelayMs;
    const retryIntervalOverrides =
      retryDelayMs === undefined ? undefined : Object.fromEntries([...sm.states].filter(([, s]) => 'Retry' in s).map(([n]) => [n, retryDelayMs]));
    const taskToken = `local:${name}:${randomUUID()}`;
    const runOptions: HookedRunOptions = {
      ...(retryIntervalOverrides && { overrides: { retryIntervalOverrides } }),
      context: {
        Execution: {
          Id: executionArn,
          Name: name,
          RoleArn: sm.roleArn,
          RedriveCount: 0,
          [EXECUTION]: { Input: execution.executionInput, StartTime: execution.startTime },
        },
        StateMachine: { Id: sm.arn, Name: sm.name },
        Task: { Token: taskToken },
      },
      [HOOKS]: this.hooks(run),
    };
    const started = machine.run(input as Parameters<StateMachine['run']>[0], runOptions);
    run.abort = () => started.abort();
    const timeouts = Object.fromEntries([...sm.targets].map(([state, t]) => [state, t.timeouts]));
    const historyOf = (log: InterpreterEvent[]) => {
      const events = toHistoryEvents(log, run.invocations, { roleArn: sm.roleArn, region: this.region(sm), timeouts, parents: run.parents });
      if (!execution.events) return events;
      return execution.dropped === undefined ? appendResumed(execution.events, events) : appendContinued(execution.events, events, execution.dropped);
    };
    const historyDir = this.options.historyDir;
    const store = (record: ExecutionRecord) => historyDir !== false && writeLocalExecution(parent ? { ...record, parent } : record, historyDir ?? DEFAULT_HISTORY_DIR);
    const progress = historyDir === false ? undefined : progressWriter((log) => store(summarizeExecution(executionArn, historyOf(log))));
    const log = collect(started.eventLogs, progress?.update);
    try {
      await started.result;
    } catch (e) {
      const suspended = e instanceof ExecutionAbortedError && run.suspended;
      if (!(e instanceof ExecutionError || e instanceof ExecutionTimeoutError || suspended)) throw e;
    } finally {
      progress?.stop();
    }
    let events = historyOf(await log);
    if (run.suspended) events = suspendedHistory(events, run.suspended.state);
    const record = summarizeExecution(executionArn, events);
    dropDefaultFailCause(record, sm);
    store(record);
    let pause: PausedTask | undefined;
    if (run.suspended) {
      const { state, parameters } = run.suspended;
      const { timeoutInSeconds, heartbeatInSeconds } = sm.targets.get(state)!.timeouts;
      const now = new Date().toISOString();
      pause = {
        executionArn,
        name,
        stateMachine: sm.arn,
        stack: sm.stack,
        ...(record.workflow && { workflow: record.workflow }),
        state,
        stateInput: run.stateInputs.get(state),
        request: requestOf(parameters),
        taskToken,
        pausedAt: now,
        lastHeartbeatAt: now,
        ...(timeoutInSeconds && { timeoutSeconds: timeoutInSeconds }),
        ...(heartbeatInSeconds && { heartbeatSeconds: heartbeatInSeconds }),
        executionInput: execution.executionInput,
        startTime: execution.startTime,
        events,
      };
      this.pauses.save(pause);
    } else if (resume) {
      this.pauses.delete(name);
    }
    return { ...record, status: record.status as LocalExecution['status'], history: record.events, ...(pause && { pause }), ...(parent && { parent }) };
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
          get: (_, state) => (typeof state === 'string' ? (event: unknown) => this.invoke(state, event, run, scope) : undefined),
        }),
      entered: (state, input, text) => {
        checkStatePayload(state, 'input', text);
        run.stateInputs.set(state, input);
      },
      exiting: (state, output, text) => checkStatePayload(state, 'output', text),
    };
  }

  /**
   * The function behind a Task state, invoked as this runtime invokes it (JSON in and out, the
   * function's context and timeout), without the state machine around it: for comparing other
   * orchestrations of the same handlers (the bench's plain chain and LangGraph.js graph).
   * @throws LocalRuntimeFault when the state is not a Lambda Task of the state machine.
   */
  taskFunction(stateMachine: string, state: string): (payload: unknown) => Promise<unknown> {
    const functionKey = this.find(stateMachine).targets.get(state)?.functionKey;
    if (!functionKey) throw new LocalRuntimeFault(`"${state}" is not a Lambda Task state of ${stateMachine}`);
    return async (payload) => invokeLikeLambda(await this.handlerOf(functionKey), payload, this.fn(functionKey));
  }

  /** `StartSyncExecution` for Express state machines: the same as {@link startExecution}. */
  startSyncExecution(stateMachine: string, input: unknown = {}, options: StartExecutionOptions = {}): Promise<LocalExecution> {
    return this.startExecution(stateMachine, input, options);
  }

  /**
   * Invoke a function of the app by ARN or name the way Lambda does (its `stepwise:entry` module,
   * JSON in and out, a thrown error as a `LambdaFunctionError`): what an EventBridge rule target or
   * an asynchronous invocation runs.
   * @throws LocalRuntimeFault when no function of the app has that ARN or name.
   */
  async invokeFunction(nameOrArn: string, payload: unknown): Promise<unknown> {
    const key = this.functionKeyIn(Object.keys(this.synthesized.templates), nameOrArn);
    if (!key) throw new LocalRuntimeFault(`no function "${nameOrArn}" in the app`);
    return invokeLikeLambda(await this.handlerOf(key), payload, this.fn(key));
  }

  private find(ref: string): LoadedStateMachine {
    const matches = this.machines.filter((m) => [m.workflowName, m.logicalId, m.name, m.arn].includes(ref));
    if (matches.length === 1) return matches[0]!;
    const known = this.machines.map((m) => m.workflowName ?? `${m.stack}/${m.logicalId}`).join(', ') || 'none';
    const why = matches.length ? `is ambiguous (${matches.map((m) => `${m.stack}/${m.logicalId}`).join(', ')})` : 'does not exist';
    throw new StateMachineDoesNotExist({ $metadata: {}, message: `state machine "${ref}" ${why} (known: ${known})` });
  }

  private region(sm: SynthesizedStateMachine): string {
    return this.synthesized.contexts[sm.stack]?.region ?? LOCAL_REGION;
  }

  private executionArn(sm: SynthesizedStateMachine, name: string): string {
    const ctx = this.synthesized.contexts[sm.stack];
    const prefix = `arn:aws:states:${ctx?.region ?? LOCAL_REGION}:${ctx?.accountId ?? LOCAL_ACCOUNT}`;
    return sm.type === 'EXPRESS' ? `${prefix}:express:${sm.name}:${name}:${randomUUID()}` : `${prefix}:execution:${sm.name}:${name}`;
  }

  private load(sm: SynthesizedStateMachine): LoadedStateMachine {
    const template = this.synthesized.templates[sm.stack]!;
    const ctx = this.synthesized.contexts[sm.stack]!;
    const resource = template.Resources![sm.logicalId]!;
    const states: LoadedStateMachine['states'] = new Map();
    const targets = new Map<string, TaskTarget>();
    const distributedMaps: string[] = [];
    for (const [name, state] of allStates(sm.definition)) {
      if (states.has(name)) throw new LocalRuntimeFault(`state machine ${sm.stack}/${sm.logicalId}: the state name "${name}" is used twice (Step Functions requires unique names)`);
      states.set(name, state);
      if (state.Type === 'Task') targets.set(name, { ...this.target(sm, state.Resource, state.Parameters), timeouts: taskTimeouts(state) });
      if (state.Type === 'Map' && (state.ItemReader || state.ResultWriter || state.ItemProcessor?.ProcessorConfig?.Mode === 'DISTRIBUTED')) distributedMaps.push(name);
    }
    return { ...sm, roleArn: String(resolveTokens(resource.Properties?.RoleArn ?? '', template, ctx)), states, targets, distributedMaps };
  }

  private target(sm: SynthesizedStateMachine, resource: string, parameters: unknown): Omit<TaskTarget, 'timeouts'> {
    if (LAMBDA_INVOKE.test(resource)) {
      const fn = (parameters as { FunctionName?: unknown } | undefined)?.FunctionName;
      return { kind: 'task', resource, ...(typeof fn === 'string' && { functionKey: this.functionKey(sm, fn) }) };
    }
    if (resource.split(':')[2] === 'lambda') {
      return { kind: 'lambda', resource, functionKey: this.functionKey(sm, resource) };
    }
    return { kind: 'task', resource };
  }

  /** The function a name or ARN refers to: in the state machine's own stack first, then in any stack. */
  private functionKey(sm: SynthesizedStateMachine, nameOrArn: string): string | undefined {
    return this.functionKeyIn([sm.stack, ...Object.keys(this.synthesized.templates).filter((s) => s !== sm.stack)], nameOrArn);
  }

  /** The function a name or ARN refers to, searching `stacks` in order. */
  private functionKeyIn(stacks: string[], nameOrArn: string): string | undefined {
    const id = nameOrArn.startsWith('arn:') ? arnToLogicalId(nameOrArn) : nameOrArn;
    for (const stack of stacks) {
      const resources = this.synthesized.templates[stack]!.Resources ?? {};
      const byId = resources[id]?.Type === 'AWS::Lambda::Function' ? id : undefined;
      const byName = Object.entries(resources).find(([, r]) => r.Type === 'AWS::Lambda::Function' && r.Properties?.FunctionName === id)?.[0];
      const logicalId = byId ?? byName;
      if (logicalId) return `${stack}/${logicalId}`;
    }
    return undefined;
  }

  private fn(key: string): LoadedFunction {
    let fn = this.functions.get(key);
    if (fn) return fn;
    const [stack, logicalId] = key.split('/') as [string, string];
    const template = this.synthesized.templates[stack]!;
    const ctx: TokenContext = this.synthesized.contexts[stack]!;
    const resource: CfnResource = template.Resources![logicalId]!;
    const props = resource.Properties ?? {};
    const name = resolveTokens<string>({ Ref: logicalId }, template, ctx);
    const variables = resolveTokens<Record<string, unknown>>((props.Environment as { Variables?: unknown })?.Variables ?? {}, template, ctx);
    const env: Record<string, string> = {
      AWS_REGION: ctx.region ?? LOCAL_REGION,
      AWS_DEFAULT_REGION: ctx.region ?? LOCAL_REGION,
      AWS_LAMBDA_FUNCTION_NAME: name,
      ...Object.fromEntries(Object.entries(variables).map(([k, v]) => [k, localPath(String(v))])),
      POWERTOOLS_TRACE_ENABLED: 'false',
      POWERTOOLS_METRICS_DISABLED: 'true',
      ...(this.options.dynamo && { AWS_ENDPOINT_URL_DYNAMODB: this.options.dynamo.endpoint }),
      ...this.options.extraEnv,
    };
    const entry = resource.Metadata?.[ENTRY_METADATA];
    fn = {
      name,
      arn: resolveTokens<string>({ 'Fn::GetAtt': [logicalId, 'Arn'] }, template, ctx),
      timeoutSeconds: Number(props.Timeout ?? 3),
      memoryMB: Number(props.MemorySize ?? 128),
      env,
      ...(typeof entry === 'string' && { entry }),
    };
    this.functions.set(key, fn);
    return fn;
  }

  /** Import the function's entry module and create its handler, once. */
  private handlerOf(key: string): Promise<(event: any, context: unknown) => unknown> {
    const fn = this.fn(key);
    fn.handler ??= (async () => {
      if (!fn.entry) throw new LocalRuntimeFault(`function ${key} has no "${ENTRY_METADATA}" metadata: the local runtime cannot tell which module it runs`);
      let mod: { createHandler?: HandlerFactory };
      try {
        mod = await import(pathToFileURL(engineEntry(fn.entry)).href);
      } catch (e) {
        // Loud, like a missing handler: a catcher must not turn a broken module into a fallback reply.
        throw new LocalRuntimeFault(`cannot import ${fn.entry}: ${(e as Error).message}`);
      }
      if (typeof mod.createHandler !== 'function') throw new LocalRuntimeFault(`${fn.entry} does not export createHandler(env, services)`);
      return mod.createHandler(fn.env, this.options.services);
    })();
    // A failed import is not cached: fix the module and the next invocation retries.
    fn.handler.catch(() => (fn.handler = undefined));
    return fn.handler;
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
    const invocation: TaskInvocation = { state, scope, kind: target.kind, resource: target.resource, input: event, inputText, startedAt: Date.now() };
    run.invocations.push(invocation);
    try {
      const lambdaInvoke = LAMBDA_INVOKE.test(target.resource);
      // `FunctionName.$` is only known once Parameters are applied.
      const functionName = lambdaInvoke ? (event as { FunctionName?: unknown }).FunctionName : undefined;
      const functionKey = target.functionKey ?? (typeof functionName === 'string' ? this.functionKey(run.sm, functionName) : undefined);
      if (WAIT_FOR_TASK_TOKEN.test(target.resource) && !this.options.handlerOverrides?.[state]) return await this.waitForTaskToken(state, event, run, scope, invocation);
      const override = this.options.handlerOverrides?.[state] ?? this.options.serviceIntegrations?.[target.resource];
      const fn: LocalFunction = functionKey ? this.fn(functionKey) : { name: state, arn: target.resource, memoryMB: 128 };
      let handler: (event: any, context: any) => unknown;
      if (override) handler = override;
      else if (functionKey) handler = await this.handlerOf(functionKey);
      else throw new LocalRuntimeFault(`Task "${state}": no local handler for resource ${target.resource} (pass handlerOverrides["${state}"] or serviceIntegrations["${target.resource}"])`);
      const fault = this.faultOf(state, run);
      const copy = JSON.parse(inputText) as { Payload?: unknown };
      const result = await invokeJsonCopy(fault ? withFault(handler, fault) : handler, lambdaInvoke ? (copy.Payload ?? null) : copy, fn);
      if (textBytes(result.text) > PAYLOAD_LIMIT_BYTES) {
        throw new TaskResultTooLargeError(target.kind === 'lambda' ? target.resource : integration(target.resource).resourceType);
      }
      invocation.output = lambdaInvoke ? { ExecutedVersion: '$LATEST', Payload: result.value, StatusCode: 200 } : result.value;
      invocation.outputText = lambdaInvoke ? `{"ExecutedVersion":"$LATEST","Payload":${result.text},"StatusCode":200}` : result.text;
      return invocation.output;
    } catch (e) {
      invocation.error = { Error: (e as Error).name, Cause: (e as Error).message };
      throw e;
    } finally {
      invocation.endedAt = Date.now();
    }
  }

  /**
   * A `.waitForTaskToken` Task: in a resumed run, the paused Task ends as resolved (output, or a
   * thrown error typed by name for Retry/Catch); otherwise the run is suspended (aborted, and
   * persisted by `drive`).
   */
  private async waitForTaskToken(state: string, event: unknown, run: ExecutionRun, scope: number, invocation: TaskInvocation): Promise<unknown> {
    if (run.resume?.state === state) {
      const { resolution } = run.resume;
      run.resume = undefined;
      if ('output' in resolution) {
        invocation.output = resolution.output;
        return resolution.output;
      }
      const [name, cause] = 'timeout' in resolution ? ['States.Timeout', `${state}: timed out`] : [resolution.error, resolution.cause ?? ''];
      throw Object.assign(new Error(cause), { name });
    }
    if (scope !== 0) throw new LocalRuntimeFault(`Task "${state}": a .waitForTaskToken Task inside a Map iteration or Parallel branch cannot pause locally`);
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

/** Definitions asl-validator accepted in this process. */
const validated = new Set<string>();

/**
 * The interpreter for a definition. asl-validator compiles its schemas on every call (0.3-1.5 s),
 * so each distinct definition is validated once per process (placeholder ARNs are not checked);
 * the interpreter runs its copy with explicit Task timeouts ({@link interpreterDefinition}).
 */
function interpreterFor(definition: StateMachineDefinition): StateMachine {
  const text = JSON.stringify(definition);
  if (!validated.has(text)) {
    new StateMachine(definition, { validationOptions: { checkArn: false, checkPaths: true } });
    validated.add(text);
  }
  return new StateMachine(interpreterDefinition(definition), { validationOptions: { noValidate: true } });
}

/** Drain the interpreter's event log (Array.fromAsync needs Node 22), telling `onEvent` the log so far after each event. */
async function collect(events: AsyncGenerator<InterpreterEvent>, onEvent?: (log: InterpreterEvent[]) => void): Promise<InterpreterEvent[]> {
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
function progressWriter(write: (log: InterpreterEvent[]) => void): { update: (log: InterpreterEvent[]) => void; stop: () => void } {
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
