/**
 * The app's state machines as the local runtime runs them: every state by name, each Task's target
 * (the function it invokes, or a service integration only an override can run), the distributed
 * Maps the interpreter cannot run, and the interpreter for a definition.
 */
import { createHash, randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { StateMachineDoesNotExist } from '@aws-sdk/client-sfn';
import { StateMachine, type StateMachineDefinition } from 'aws-local-stepfunctions';
import { cacheDir } from '../../core/paths.ts';
import type { FunctionRegistry } from '../cloud/function-registry.ts';
import { LOCAL_ACCOUNT, LOCAL_REGION, resolveIntrinsics } from '../cloud/intrinsics.ts';
import { LocalRuntimeFault } from '../cloud/lambda.ts';
import type { SynthesizedApp, SynthesizedStateMachine } from '../cloud/synth.ts';
import { type TaskFault, validateFault } from './faults.ts';
import type { TaskInvocation } from './history-events.ts';
import { allStates, interpreterDefinition, type TaskTimeouts, taskTimeouts } from './interpreter.ts';

/** The `lambda:invoke` service integration (a function named by `FunctionName`, output wrapped in `Payload`). */
export const LAMBDA_INVOKE = /^arn:aws[a-z-]*:states:::lambda:invoke$/;

/** A Task's target: a function (by ARN, or through `lambda:invoke`), or what only an override can run. */
export interface TaskTarget {
  kind: TaskInvocation['kind'];
  resource: string;
  /** `stack/logicalId` of the function, when the resource names one in the template. */
  functionKey?: string;
  timeouts: TaskTimeouts;
}

export interface LoadedStateMachine extends SynthesizedStateMachine {
  /** Built on the first execution. */
  machine?: StateMachine;
  roleArn: string;
  /** Where its stack is deployed: the region and account of its execution ARNs and history. */
  region: string;
  account: string;
  /** Every state at any depth, by name (names are unique across a whole state machine). */
  states: Map<string, { Type: string } & Record<string, unknown>>;
  /** Every Task state at any depth, by name. */
  targets: Map<string, TaskTarget>;
  /**
   * Distributed Map states (ItemReader, ResultWriter, Mode DISTRIBUTED): the interpreter would run
   * them as inline Maps, wrongly.
   */
  distributedMaps: string[];
}

/**
 * Read a state machine of the app: its role, states and Task targets.
 * @throws LocalRuntimeFault when a state name is used twice.
 */
export function loadStateMachine(
  sm: SynthesizedStateMachine,
  app: SynthesizedApp,
  functions: FunctionRegistry,
): LoadedStateMachine {
  const template = app.templates[sm.stack]!;
  const ctx = app.contexts[sm.stack]!;
  const states: LoadedStateMachine['states'] = new Map();
  const targets = new Map<string, TaskTarget>();
  const distributedMaps: string[] = [];
  for (const [name, state] of allStates(sm.definition)) {
    if (states.has(name)) {
      const where = `state machine ${sm.stack}/${sm.logicalId}`;
      const problem = `the state name "${name}" is used twice (Step Functions requires unique names)`;
      throw new LocalRuntimeFault(`${where}: ${problem}`);
    }
    states.set(name, state);
    if (state.Type === 'Task') {
      const target = taskTarget(sm, state.Resource, state.Parameters, functions);
      targets.set(name, { ...target, timeouts: taskTimeouts(state) });
    }
    if (state.Type === 'Map') {
      const distributedMode = state.ItemProcessor?.ProcessorConfig?.Mode === 'DISTRIBUTED';
      if (state.ItemReader || state.ResultWriter || distributedMode) distributedMaps.push(name);
    }
  }
  const roleArn = String(
    resolveIntrinsics(template.Resources![sm.logicalId]!.Properties?.RoleArn ?? '', template, ctx),
  );
  const place = { region: ctx.region ?? LOCAL_REGION, account: ctx.accountId ?? LOCAL_ACCOUNT };
  return { ...sm, roleArn, ...place, states, targets, distributedMaps };
}

function taskTarget(
  sm: SynthesizedStateMachine,
  resource: string,
  parameters: unknown,
  functions: FunctionRegistry,
): Omit<TaskTarget, 'timeouts'> {
  if (LAMBDA_INVOKE.test(resource)) {
    const fn = (parameters as { FunctionName?: unknown } | undefined)?.FunctionName;
    return { kind: 'task', resource, ...(typeof fn === 'string' && { functionKey: functions.keyOf(fn, sm.stack) }) };
  }
  if (resource.split(':')[2] === 'lambda') {
    return { kind: 'lambda', resource, functionKey: functions.keyOf(resource, sm.stack) };
  }
  return { kind: 'task', resource };
}

/**
 * The state machine a workflow name, logical id, name or ARN refers to.
 * @throws StateMachineDoesNotExist listing the known ones, when none or several match.
 */
export function findStateMachine(machines: readonly LoadedStateMachine[], ref: string): LoadedStateMachine {
  const matches = machines.filter((m) => [m.workflowName, m.logicalId, m.name, m.arn].includes(ref));
  if (matches.length === 1) return matches[0]!;
  const known = machines.map((m) => m.workflowName ?? `${m.stack}/${m.logicalId}`).join(', ') || 'none';
  const candidates = matches.map((m) => `${m.stack}/${m.logicalId}`).join(', ');
  const why = matches.length ? `is ambiguous (${candidates})` : 'does not exist';
  throw new StateMachineDoesNotExist({ $metadata: {}, message: `state machine "${ref}" ${why} (known: ${known})` });
}

/**
 * Check every fault against the Task states of the app: a name no Task has is refused, and so is
 * a timeout fault for a state that can never time out (no function and no declared timeout).
 * @throws LocalRuntimeFault naming the fault.
 */
export function checkFaults(faults: Record<string, TaskFault>, machines: readonly LoadedStateMachine[]): void {
  for (const [state, fault] of Object.entries(faults)) {
    const targets = machines.flatMap((m) => m.targets.get(state) ?? []);
    if (!targets.length) throw new LocalRuntimeFault(`faults["${state}"]: no Task state "${state}" in the app`);
    const declared = (t: TaskTarget) => Boolean(t.timeouts.timeoutInSeconds || t.timeouts.heartbeatInSeconds);
    const canTimeOut = targets.every((t) => Boolean(t.functionKey) || LAMBDA_INVOKE.test(t.resource) || declared(t));
    validateFault(state, fault, canTimeOut);
  }
}

/** The ARN of the execution `name` of a state machine (an Express one's ends in a fresh id, as in Step Functions). */
export function executionArn(sm: LoadedStateMachine, name: string): string {
  const prefix = `arn:aws:states:${sm.region}:${sm.account}`;
  if (sm.type === 'EXPRESS') return `${prefix}:express:${sm.name}:${name}:${randomUUID()}`;
  return `${prefix}:execution:${sm.name}:${name}`;
}

/** Definitions asl-validator accepted in this process. */
const validated = new Set<string>();

let version: string | undefined;

/**
 * The interpreter's version, read once per process (its package.json is not exported: found above its entry): what
 * it accepts may change with it.
 */
function interpreterVersion(): string {
  version ??= readInterpreterVersion();
  return version;
}

function readInterpreterVersion(): string {
  for (let dir = dirname(createRequire(import.meta.url).resolve('aws-local-stepfunctions')); ; dir = dirname(dir)) {
    const manifest = join(dir, 'package.json');
    const pkg = existsSync(manifest) ? JSON.parse(readFileSync(manifest, 'utf8')) : {};
    if (pkg.name === 'aws-local-stepfunctions') return pkg.version;
    if (dirname(dir) === dir) return 'unknown';
  }
}

/** Where a definition asl-validator accepted is marked, by a digest of its text and the interpreter's version. */
export const acceptedMark = (text: string): string =>
  join(
    cacheDir(),
    'asl-accepted',
    createHash('sha256').update(`${interpreterVersion()}\n${text}`).digest('hex').slice(0, 32),
  );

/**
 * The interpreter for a definition. asl-validator compiles its schemas on every call (0.3-1.5 s), so each distinct
 * definition is validated once per process and, once accepted, marked in the user's cache so the next command that
 * runs it (the same workflow, unchanged) skips the check (placeholder ARNs are not checked); the interpreter runs its
 * copy with explicit Task timeouts ({@link interpreterDefinition}).
 */
export function interpreterFor(definition: StateMachineDefinition): StateMachine {
  const text = JSON.stringify(definition);
  if (!validated.has(text)) {
    const mark = acceptedMark(text);
    if (!existsSync(mark)) {
      new StateMachine(definition, { validationOptions: { checkArn: false, checkPaths: true } });
      mkdirSync(dirname(mark), { recursive: true });
      writeFileSync(mark, '');
    }
    validated.add(text);
  }
  return new StateMachine(interpreterDefinition(definition), { validationOptions: { noValidate: true } });
}

/** The interpreter for a definition started at another of its top-level states (a resumed Task, a fork's state). */
export function interpreterFrom(definition: StateMachineDefinition, state: string): StateMachine {
  const startingThere = { ...interpreterDefinition(definition), StartAt: state };
  return new StateMachine(startingThere, { validationOptions: { noValidate: true } });
}
