/**
 * How the local runtime drives aws-local-stepfunctions where the library, as shipped, differs from
 * Step Functions:
 *
 * - Nested executions (Map iterations, Parallel branches) get the runtime's Task handlers and carry a
 *   scope id on every event they log, so each Task attempt is attributed to its iteration or branch.
 * - A hook sees every state's input and output as the interpreter enters and leaves it, with its
 *   JSON text, made once: the payload size quota is checked on it (a throw fails the execution) and
 *   the history shows it as it was then.
 * - Task timeouts are exactly the ASL's: the interpreter would otherwise apply 60 s to every Task.
 * - JSONPath `$` on a falsy item (`0`, `false`, `""`, `null`) is the item, not "no value".
 * - `$$.Execution.Input`/`StartTime` are the execution's inside Map iterations and Parallel branches.
 * - Reference paths (`$.a.b`) are read directly, with jsonpath-plus's result at a fraction of its cost.
 *
 * The hooks patch the library's prototypes once per process, and act only on executions the local
 * runtime starts (their run options carry {@link HOOKS}); the JSONPath changes apply to every path
 * the process evaluates, and give Step Functions' results.
 */
import { type RunOptions, StateMachine, type StateMachineDefinition } from 'aws-local-stepfunctions';
// The JSONPath engine aws-local-stepfunctions runs (hoisted: the same module instance the library imports).
import { JSONPath } from 'jsonpath-plus';

/**
 * Key, on the `Execution` of the context object the runtime passes, of the execution's real `Input`
 * and `StartTime`: the interpreter resets both for every Map iteration and Parallel branch, so
 * `$$.Execution.Input` would be the item. `$$` paths read these instead.
 */
export const EXECUTION = Symbol('stepwise.execution');

/**
 * Run options key of the {@link ExecutionHooks} (a symbol: the library copies it to nested executions with the
 * options).
 */
export const HOOKS = Symbol('stepwise.hooks');
/** Key of the scope id on run options (the scope of the execution starting a nested one) and on logged events. */
export const SCOPE = Symbol('stepwise.scope');
/**
 * Key, on a logged event, of the JSON text of its payload (the execution's input or output, the
 * state's input or output) as it was when the event was logged: the history shows this text.
 */
export const TEXT = Symbol('stepwise.text');

/** A stand-in for a Task's resource: gets the Task's effective input (after `Parameters`), returns its result. */
export type TaskHandler = (event: any) => unknown;

/** What the local runtime plugs into every execution (root, Map iteration, Parallel branch) it starts. */
export interface ExecutionHooks {
  /** A new scope for an execution started from the execution of scope `parent` (`undefined`: the root execution). */
  open(parent: number | undefined): number;
  /** The Task handlers of the execution of `scope`, by state name. */
  handlers(scope: number): Record<string, TaskHandler>;
  /** A state was entered with `input`, whose JSON text is `text` (thrown errors fail the execution). */
  entered(state: string, input: unknown, text: string): void;
  /**
   * A state is about to exit with `output`, whose JSON text is `text` (thrown errors fail the execution; the exit is
   * not logged).
   */
  exiting(state: string, output: unknown, text: string): void;
}

/** Run options of an execution the local runtime starts. */
export type HookedRunOptions = RunOptions & { [HOOKS]: ExecutionHooks; [SCOPE]?: number };

type AnyState = Record<string, any> & { Type: string };
type Definition = Pick<StateMachineDefinition, 'States' | 'StartAt'>;

/** Every state of a definition with its name, at any depth (Map `ItemProcessor`/`Iterator`, Parallel `Branches`). */
export function* allStates(definition: Definition): Generator<[string, AnyState]> {
  for (const [name, state] of Object.entries(definition.States) as [string, AnyState][]) {
    yield [name, state];
    const processor = state.ItemProcessor ?? state.Iterator;
    if (state.Type === 'Map' && processor) yield* allStates(processor);
    if (state.Type === 'Parallel') for (const branch of state.Branches ?? []) yield* allStates(branch);
  }
}

/** The declared `TimeoutSeconds`/`HeartbeatSeconds` of a Task (Step Functions has no default for either). */
export interface TaskTimeouts {
  timeoutInSeconds?: number;
  heartbeatInSeconds?: number;
}

export function taskTimeouts(state: AnyState): TaskTimeouts {
  return {
    ...(typeof state.TimeoutSeconds === 'number' && { timeoutInSeconds: state.TimeoutSeconds }),
    ...(typeof state.HeartbeatSeconds === 'number' && { heartbeatInSeconds: state.HeartbeatSeconds }),
  };
}

/** The longest delay `setTimeout` honours (about 24.8 days): the interpreter's stand-in for "no timeout". */
const NO_TIMEOUT_SECONDS = Math.floor(0x7fffffff / 1000);

/**
 * The copy of a definition the interpreter runs: every Task gets an explicit `TimeoutSeconds`, the
 * earlier of its declared timeout and heartbeat (local tasks send no heartbeats), or none at all;
 * `TimeoutSecondsPath` is left to the interpreter. Step Functions reports a heartbeat timeout as
 * `States.Timeout`, which `States.HeartbeatTimeout` in Retry/Catch also matches: for a Task with a
 * heartbeat (whose every local timeout is a heartbeat timeout) that name becomes `States.Timeout`,
 * the only one the interpreter matches.
 */
export function interpreterDefinition(definition: StateMachineDefinition): StateMachineDefinition {
  const copy = structuredClone(definition);
  for (const [, state] of allStates(copy)) {
    if (state.Type !== 'Task' || state.TimeoutSecondsPath !== undefined) continue;
    const { timeoutInSeconds, heartbeatInSeconds } = taskTimeouts(state);
    state.TimeoutSeconds = Math.min(timeoutInSeconds ?? NO_TIMEOUT_SECONDS, heartbeatInSeconds ?? NO_TIMEOUT_SECONDS);
    if (heartbeatInSeconds === undefined) continue;
    for (const rule of [...(state.Retry ?? []), ...(state.Catch ?? [])] as { ErrorEquals: string[] }[]) {
      rule.ErrorEquals = rule.ErrorEquals.map((name) => (name === HEARTBEAT_TIMEOUT ? 'States.Timeout' : name));
    }
  }
  return copy;
}

const HEARTBEAT_TIMEOUT = 'States.HeartbeatTimeout';

/** The interpreter's event logger, as far as the hooks use it. */
interface EventLogger {
  dispatch(event: object): void;
  dispatchStateEnteredEvent(name: string, type: string, input: unknown): void;
  dispatchStateExitedEvent(name: string, type: string, input: unknown, output: unknown): void;
}

interface ExecuteOptions {
  runOptions?: RunOptions & { [HOOKS]?: ExecutionHooks; [SCOPE]?: number };
  eventLogger: EventLogger;
}

type Execute = (this: StateMachine, input: unknown, options: ExecuteOptions, cleanup: () => void) => Promise<unknown>;

/** Route one execution's Task states to its scope's handlers and let the hooks see its events. */
function instrument(options: ExecuteOptions, hooks: ExecutionHooks): void {
  const runOptions = options.runOptions!;
  const scope = hooks.open(runOptions[SCOPE]);
  // The library passes these run options on to the executions this one starts (Map, Parallel).
  options.runOptions = {
    ...runOptions,
    [SCOPE]: scope,
    overrides: { ...runOptions.overrides, taskResourceLocalHandlers: hooks.handlers(scope) as never },
  };
  const logger = options.eventLogger;
  const { dispatch, dispatchStateEnteredEvent, dispatchStateExitedEvent } = logger;
  // A state's input is the very object the state before it exited with, and the interpreter never
  // mutates a state's output (it works on copies): its text is made once, for the quota and the history.
  let last: { value: unknown; text: string } | undefined;
  const textOf = (value: unknown) => {
    if (!last || last.value !== value) last = { value, text: JSON.stringify(value ?? null) };
    return last.text;
  };
  // A nested execution's start and end become its parent's Map iteration or Parallel branch events, which show no
  // payload.
  const root = runOptions[SCOPE] === undefined;
  // Nested events reach the root log through their parents' loggers: the innermost scope is kept.
  logger.dispatch = (event) => {
    const tagged = event as LoggedEvent;
    if (tagged[SCOPE] === undefined) {
      tagged[SCOPE] = scope;
      const payload = payloadOf(tagged, root);
      if (payload) tagged[TEXT] = textOf(payload.value);
    }
    dispatch.call(logger, tagged);
  };
  logger.dispatchStateEnteredEvent = (name, type, input) => {
    dispatchStateEnteredEvent.call(logger, name, type, input);
    hooks.entered(name, input, textOf(input));
  };
  logger.dispatchStateExitedEvent = (name, type, input, output) => {
    hooks.exiting(name, output, textOf(output));
    dispatchStateExitedEvent.call(logger, name, type, input, output);
  };
}

/** A logged event as the hooks tag it. */
type LoggedEvent = {
  type: string;
  input?: unknown;
  output?: unknown;
  state?: { input?: unknown; output?: unknown };
  [SCOPE]?: number;
  [TEXT]?: string;
};

/** The payload the history shows for an event of the root execution (`root`) or a nested one, if it shows one. */
function payloadOf(event: LoggedEvent, root: boolean): { value: unknown } | undefined {
  switch (event.type) {
    case 'ExecutionStarted':
      return root ? { value: event.input } : undefined;
    case 'ExecutionSucceeded':
      return root ? { value: event.output } : undefined;
    case 'StateEntered':
      return { value: event.state?.input };
    case 'StateExited':
      return { value: event.state?.output };
    default:
      return undefined;
  }
}

let installed = false;

/** Install the hooks (idempotent). */
export function installInterpreterHooks(): void {
  if (installed) return;
  installed = true;
  const proto = StateMachine.prototype as unknown as { execute: Execute };
  const execute = proto.execute;
  proto.execute = function (input, options, cleanup) {
    const hooks = options.runOptions?.[HOOKS];
    if (hooks) instrument(options, hooks);
    return execute.call(this, input, options, cleanup);
  };
  patchJsonPath(JSONPath.prototype as unknown as { evaluate: JsonPathEvaluate });
}

type JsonPathEvaluate = (this: JsonPathInstance, expr: unknown, ...rest: unknown[]) => unknown;
/** The options of a jsonpath-plus instance the fast path depends on. */
type JsonPathInstance = { wrap: boolean; resultType: string; callback: unknown };

/** Values jsonpath-plus mistakes for a missing document. */
const isFalsyJson = (value: unknown) => value === null || value === false || value === 0 || value === '';

type ContextObject = { Execution?: Record<string | symbol, unknown> & { [EXECUTION]?: object } };

/** What {@link referenceValue} answers for a path it does not evaluate itself. */
export const NOT_A_REFERENCE = Symbol('stepwise.notAReference');

/** `$.name.name…` with plain names: a reference path, which nearly every ASL path is. */
const REFERENCE_PATH = /^\$(?:\.[A-Za-z_][A-Za-z0-9_]*)+$/;
/** The names of each reference path seen (`null`: not one); paths come from definitions, so this stays small. */
const referenceNames = new Map<string, string[] | null>();

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The value at a reference path `path` in `json`, as jsonpath-plus finds it with `wrap: false`
 * (`undefined`: no value), when every value on the way is a plain object; otherwise
 * {@link NOT_A_REFERENCE}, for jsonpath-plus to evaluate. jsonpath-plus parses and traces every
 * path and throws an error to return a scalar: the interpreter's largest local cost, for what is
 * a few property reads.
 */
export function referenceValue(json: unknown, path: string): unknown {
  let names = referenceNames.get(path);
  if (names === undefined)
    referenceNames.set(path, (names = REFERENCE_PATH.test(path) ? path.split('.').slice(1) : null));
  if (names === null) return NOT_A_REFERENCE;
  let value = json;
  for (const name of names) {
    if (!isPlainObject(value)) return NOT_A_REFERENCE;
    if (!Object.hasOwn(value, name)) return undefined;
    value = value[name];
  }
  return value;
}

/**
 * Where the interpreter evaluates a path:
 * - jsonpath-plus answers "no value" for any falsy document, so the interpreter fails `"x.$": "$"`
 *   (or `InputPath: "$"`) on a Map item `0`, `false`, `""` or `null`; Step Functions gives the item.
 * - a context object (`$$` paths) carrying {@link EXECUTION} is read with the execution's own
 *   `Input` and `StartTime`.
 * - a reference path is read directly ({@link referenceValue}), with the same result.
 */
function patchJsonPath(prototype: { evaluate: JsonPathEvaluate }): void {
  const evaluate = prototype.evaluate;
  prototype.evaluate = function (expr, ...rest) {
    if (!expr || typeof expr !== 'object' || Array.isArray(expr)) return evaluate.call(this, expr, ...rest);
    let query = expr as { path?: unknown; json?: unknown; wrap?: boolean };
    const { path } = query;
    const wrap = Object.hasOwn(query, 'wrap') ? query.wrap : this.wrap;
    if (typeof path === 'string' && path.trim() === '$' && isFalsyJson(query.json))
      return wrap ? [query.json] : query.json;
    const execution = (query.json as ContextObject | undefined)?.Execution;
    if (execution?.[EXECUTION])
      query = { ...query, json: { ...(query.json as object), Execution: { ...execution, ...execution[EXECUTION] } } };
    // The options the interpreter uses (jsonPathQuery); anything else goes to jsonpath-plus.
    const plain = Object.keys(query).every((key) => key === 'path' || key === 'json' || key === 'wrap');
    if (plain && wrap === false && this.resultType === 'value' && !this.callback && typeof path === 'string') {
      const value = referenceValue(query.json, path);
      if (value !== NOT_A_REFERENCE) return value;
    }
    return evaluate.call(this, query, ...rest);
  };
}
