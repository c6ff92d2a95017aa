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
 * This module is the runtime's face (start, resume, fork, invoke); function-registry.ts resolves
 * the app's functions, state-machines.ts reads its state machines, and execution-driver.ts drives
 * each execution through the interpreter.
 *
 * Remaining limits:
 * - Inline Map only (a distributed Map is refused; no ToleratedFailure*); of the `.sync` patterns only
 *   `states:startExecution.sync:2` (a workflow step: the child runs here, see child-executions.ts);
 *   no activities, no `$$.State.*`.
 * - Wait states take no time: they move {@link LocalRuntime.clock} (see waits.ts).
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
import { ExecutionAlreadyExists, type HistoryEvent, StateMachineDoesNotExist } from '@aws-sdk/client-sfn';
import type { App } from 'aws-cdk-lib';
import { START_EXECUTION_SYNC } from '../../definitions/workflow/constructs/workflow-step.ts';
import { FunctionRegistry, type FunctionRegistryOptions } from '../cloud/function-registry.ts';
import { LocalRuntimeFault } from '../cloud/lambda.ts';
import { type SynthesizedApp, type SynthesizedStateMachine, synthesize, synthProject } from '../cloud/synth.ts';
import { type ForkParent, parseExecutionArn } from '../records/history.ts';
import {
  checkExecutionName,
  DEFAULT_PAUSES_DIR,
  expiredAt,
  type PausedTask,
  PauseStore,
  type Resolution,
} from '../records/pauses.ts';
import { childExecutionIntegration } from './child-executions.ts';
import { ExecutionDriver, type ExecutionDriverOptions, type LocalExecution } from './execution-driver.ts';
import { installInterpreterHooks } from './interpreter.ts';
import {
  checkFaults,
  executionArn,
  findStateMachine,
  interpreterFor,
  interpreterFrom,
  type LoadedStateMachine,
  loadStateMachine,
} from './state-machines.ts';
import type { SessionClock } from './waits.ts';

export type { LocalExecution } from './execution-driver.ts';
export type { TaskFault } from './faults.ts';
export type { TaskHandler } from './interpreter.ts';

export interface LocalRuntimeOptions extends FunctionRegistryOptions, ExecutionDriverOptions {
  /**
   * Project environment to synthesize (`buildStepwiseApp` with `getEnvConfig(env)`), when `app` is not given.
   * @default 'dev'
   */
  env?: string;
  /** Run this app instead of the project's: a `synthesize()` result, or a function that builds stacks into the app. */
  app?: SynthesizedApp | ((app: App) => void);
  /**
   * Where executions paused at a `.waitForTaskToken` Task are kept for `resumeExecution`; `false` keeps them in memory.
   * @default `.stepwise/pauses` when `historyDir` is not `false`, else memory
   */
  pausesDir?: string | false;
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

/**
 * Runs the state machines of a synthesized app locally.
 *
 * - The definitions are the deployed ASL (intrinsics resolved); each is validated (once per process)
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
  private readonly functions: FunctionRegistry;
  private readonly driver: ExecutionDriver;
  private readonly startedNames = new Set<string>();
  private readonly pauses: PauseStore;
  /** The session clock: Wait states move it instead of sleeping (see waits.ts). */
  readonly clock: SessionClock;

  private constructor(synthesized: SynthesizedApp, options: LocalRuntimeOptions) {
    this.functions = new FunctionRegistry(synthesized, options);
    this.machines = synthesized.stateMachines.map((sm) => loadStateMachine(sm, synthesized, this.functions));
    this.pauses = new PauseStore(options.pausesDir ?? (options.historyDir === false ? false : DEFAULT_PAUSES_DIR));
    // A workflow step's child runs on this runtime, in the same session.
    // Locally a state machine's ARN ends in its logical id: the child is found by the name its ARN ends in.
    const child = childExecutionIntegration((arn, input) => this.startExecution(arn.split(':').pop()!, input));
    const serviceIntegrations = { [START_EXECUTION_SYNC]: child, ...options.serviceIntegrations };
    this.driver = new ExecutionDriver(this.functions, this.pauses, { ...options, serviceIntegrations });
    this.clock = this.driver.clock;
    this.stateMachines = synthesized.stateMachines;
    checkFaults(options.faults ?? {}, this.machines);
  }

  /**
   * Synthesize (or take) the app and prepare every state machine. Handler modules are imported
   * on the first invocation of their function.
   */
  static async create(options: LocalRuntimeOptions = {}): Promise<LocalRuntime> {
    installInterpreterHooks();
    const app = options.app;
    const synthesized =
      app === undefined
        ? await synthProject(options.env)
        : typeof app === 'function'
          ? synthesize(app, { env: options.env })
          : app;
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
    return findStateMachine(this.machines, ref);
  }

  /**
   * Run an execution to its end and return it (`StartExecution` + waiting, or `StartSyncExecution`
   * for Express machines). The record is also stored in `historyDir`.
   * @throws ExecutionAlreadyExists when a Standard state machine already ran an execution with this name on this
   * runtime.
   * @throws InvalidName for a name Step Functions would refuse.
   * @throws LocalRuntimeFault when the state machine has a distributed Map state.
   */
  async startExecution(
    stateMachine: string,
    input: unknown = {},
    options: StartExecutionOptions = {},
  ): Promise<LocalExecution> {
    const sm = findStateMachine(this.machines, stateMachine);
    if (sm.distributedMaps.length) {
      const states = sm.distributedMaps.join('", "');
      const where = `state machine ${sm.stack}/${sm.logicalId}`;
      throw new LocalRuntimeFault(`${where}: distributed Map state "${states}" cannot run locally (inline Map only)`);
    }
    const machine = (sm.machine ??= interpreterFor(sm.definition));
    const name = options.name ?? randomUUID();
    checkExecutionName(name);
    this.claimName(sm, name);
    const executionInput = JSON.parse(JSON.stringify(input ?? null));
    const startTime = new Date().toISOString();
    const execution = { executionArn: executionArn(sm, name), name, executionInput, startTime };
    return this.driver.drive(sm, machine, executionInput, execution);
  }

  /** Express executions have no name uniqueness in Step Functions either: only a Standard one's name is claimed. */
  private claimName(sm: LoadedStateMachine, name: string): void {
    if (sm.type !== 'STANDARD') return;
    const key = `${sm.arn}|${name}`;
    if (this.startedNames.has(key)) {
      const message = `Execution Already Exists: '${executionArn(sm, name)}'`;
      throw new ExecutionAlreadyExists({ $metadata: {}, message });
    }
    this.startedNames.add(key);
  }

  /**
   * `SendTaskSuccess` / `SendTaskFailure` for a local execution paused at a `.waitForTaskToken`
   * Task (by name or ARN), in this or any later process: runs the same ASL from the paused Task on
   * (see pauses.ts). Past the Task's timeout the resolution is its `States.Timeout` instead, as in
   * Step Functions (where the late call fails with `TaskTimedOut`): `resumedWith` says which.
   * The pause is claimed first (see `PauseStore.claim`): of concurrent resumers of one execution,
   * in this process or others, exactly one runs it on.
   * @throws ExecutionDoesNotExist when no execution of that name is paused.
   * @throws ExecutionClaimedError while another resumer runs it, or once another resumer ran it.
   * @throws InvalidName for a name that is not an execution name, before any file is read.
   */
  async resumeExecution(
    nameOrArn: string,
    resolution: Resolution,
    options: { now?: Date } = {},
  ): Promise<LocalExecution> {
    const release = this.pauses.claim(this.pausedName(nameOrArn));
    try {
      // Read under the claim: a resumer that finished first has deleted it.
      const paused = this.paused(nameOrArn);
      const sm = this.machines.find((m) => m.stack === paused.stack && m.arn === paused.stateMachine);
      if (!sm) {
        const missing = `its state machine ${paused.stack}/${paused.stateMachine} is not in this app`;
        throw new StateMachineDoesNotExist({ $metadata: {}, message: `${paused.name}: ${missing}` });
      }
      const expired = expiredAt(paused, options.now ?? new Date());
      const effective: Resolution = expired ? { error: expired.error, cause: expired.cause } : resolution;
      const machine = interpreterFrom(sm.definition, paused.state);
      const resume = { state: paused.state, resolution: effective };
      const execution = await this.driver.drive(sm, machine, paused.stateInput, paused, { resume });
      const resumedWith = expired || 'timeout' in resolution ? 'timeout' : 'output' in resolution ? 'output' : 'error';
      return { ...execution, resumedWith };
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
    const sm = findStateMachine(this.machines, stateMachine);
    if (!(options.state in sm.definition.States)) {
      const where = `${sm.stack}/${sm.logicalId}`;
      throw new LocalRuntimeFault(`"${options.state}" is not a top-level state of ${where}: a fork starts at one`);
    }
    checkExecutionName(options.name);
    const machine = interpreterFrom(sm.definition, options.state);
    const startedAt = options.history[0]?.timestamp;
    const execution = {
      executionArn: executionArn(sm, options.name),
      name: options.name,
      executionInput: options.executionInput,
      startTime: startedAt ? new Date(startedAt).toISOString() : new Date().toISOString(),
      events: options.history,
      dropped: 1,
    };
    const stateInput = JSON.parse(JSON.stringify(options.stateInput ?? null));
    return this.driver.drive(sm, machine, stateInput, execution, { parent: options.parent });
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
    return this.pauses.require(this.pausedName(nameOrArn));
  }

  /**
   * The function behind a Task state, invoked as this runtime invokes it (JSON in and out, the
   * function's context and timeout), without the state machine around it: for comparing other
   * orchestrations of the same handlers (the bench's plain chain and LangGraph.js graph).
   * @throws LocalRuntimeFault when the state is not a Lambda Task of the state machine.
   */
  taskFunction(stateMachine: string, state: string): (payload: unknown) => Promise<unknown> {
    const functionKey = findStateMachine(this.machines, stateMachine).targets.get(state)?.functionKey;
    if (!functionKey) throw new LocalRuntimeFault(`"${state}" is not a Lambda Task state of ${stateMachine}`);
    return (payload) => this.functions.invoke(functionKey, payload);
  }

  /** `StartSyncExecution` for Express state machines: the same as {@link startExecution}. */
  startSyncExecution(
    stateMachine: string,
    input: unknown = {},
    options: StartExecutionOptions = {},
  ): Promise<LocalExecution> {
    return this.startExecution(stateMachine, input, options);
  }

  /**
   * Invoke a function of the app by ARN or name the way Lambda does (its `stepwise:entry` module,
   * JSON in and out, a thrown error as a `LambdaFunctionError`): what an EventBridge rule target or
   * an asynchronous invocation runs.
   * @throws LocalRuntimeFault when no function of the app has that ARN or name.
   */
  async invokeFunction(nameOrArn: string, payload: unknown): Promise<unknown> {
    const key = this.functions.keyOf(nameOrArn);
    if (!key) throw new LocalRuntimeFault(`no function "${nameOrArn}" in the app`);
    return this.functions.invoke(key, payload);
  }
}
