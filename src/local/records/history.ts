/**
 * Execution history for local and deployed executions in one shape: the Step Functions
 * `HistoryEvent`s, a summary record, and the step trail derived from them.
 */
import { existsSync, lstatSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { lstat, readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import {
  ExecutionDoesNotExist,
  GetExecutionHistoryCommand,
  type HistoryEvent,
  type SFNClient,
} from '@aws-sdk/client-sfn';
import * as z from 'zod';
import { InvalidInputError } from '../../core/errors.ts';
import { DEFAULT_STATE_DIRS, SAFE_RECORD_NAME, type StateDirs } from './state-dirs.ts';

/**
 * Where the local runtime writes one JSON file per execution (`.stepwise/` is git-ignored), whatever the working
 * directory.
 */
export const DEFAULT_HISTORY_DIR = DEFAULT_STATE_DIRS.executions;

export type ExecutionStatus = 'RUNNING' | 'SUCCEEDED' | 'FAILED' | 'TIMED_OUT' | 'ABORTED';

/** One execution, local or deployed (`<historyDir>/<name>.json` holds exactly this, dates as ISO strings). */
export interface ExecutionRecord {
  executionArn: string;
  name: string;
  /** The state machine ARN (local: a placeholder ARN ending in the state machine's logical id). */
  stateMachine: string;
  /** The `workflow` field of the first task's input, when the state machine runs a Stepwise workflow. */
  workflow?: string;
  status: ExecutionStatus;
  startDate: Date;
  stopDate?: Date;
  input: unknown;
  output?: unknown;
  error?: { Error: string; Cause?: string };
  events: HistoryEvent[];
  /**
   * A fork (Studio, `stepwise replay`): the execution it was forked from, and the step (by trail position) it re-ran
   * from.
   */
  parent?: ForkParent;
  /** A deployed execution read into the local state (`stepwise studio` Import, `--aws`). */
  imported?: { from: 'file' | 'aws'; at: string };
}

/** Where a fork came from: its parent execution and the trail step it re-ran from. */
export interface ForkParent {
  execution: string;
  step: string;
  /** The step's position in the parent's step trail (0 = the entry step). */
  index: number;
  /** What the fork changed there (an edited step input or email, pinned tool results, a pinned model answer). */
  changes?: ForkChange[];
}

/** One change a fork made: what (`answer.next`, `email.subject`, `toolResults.<step>.<tool>`), from what, to what. */
export interface ForkChange {
  what: string;
  from?: unknown;
  to: unknown;
}

/** One Task state of the trail: what a step was given, what it returned, how it ended. */
export interface TrailStep {
  /** The state (= step) name. */
  name: string;
  /** The ASL state type (`Task`). */
  type: string;
  enteredAt: Date;
  exitedAt?: Date;
  /** What the task was invoked with (a `StepInput` for step Lambdas); the state input if it was never invoked. */
  input: unknown;
  /** What the last successful attempt returned (a `StepOutput` for step Lambdas). */
  output?: unknown;
  /**
   * The failure that ended the step (caught to the fallback, or ending the execution); absent once an attempt
   * succeeded.
   */
  error?: { error: string; cause?: string };
  /** Attempts after the first (Retry). */
  retries: number;
  /** `output.next` / `output.reason` when the output is a step result. */
  next?: string;
  reason?: string;
}

/** Parse a history payload; truncated payloads (deployed executions over 256 KB) stay strings. */
function parse(text: string | undefined): unknown {
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

const SCHEDULED = new Set(['LambdaFunctionScheduled', 'TaskScheduled']);
const SUCCEEDED = new Set(['LambdaFunctionSucceeded', 'TaskSucceeded']);

/**
 * The `{ error, cause }` of any failure event (Lambda or service task: failed, timed out, start/schedule/submit
 * failed).
 */
function failureOf(e: HistoryEvent): { error: string; cause?: string } | undefined {
  if (!e.type?.startsWith('LambdaFunction') && !e.type?.startsWith('Task')) return undefined;
  if (!/(Failed|TimedOut)$/.test(e.type)) return undefined;
  const key = `${e.type[0]!.toLowerCase()}${e.type.slice(1)}EventDetails` as keyof HistoryEvent;
  const details = (e[key] ?? {}) as { error?: string; cause?: string };
  return { error: details.error ?? e.type, ...(details.cause !== undefined && { cause: details.cause }) };
}

/**
 * The step trail: one entry per Task state entered (at any depth: Map iterations and Parallel
 * branches included), in the order entered, with the task's input and output, retries, and the
 * error that ended it. An event belongs to the step its `previousEventId` chain leads back to, so
 * concurrent iterations do not mix (an event without a known previous event follows the one before
 * it in the list). Pure; works on local and `GetExecutionHistory` events.
 */
export function stepTrail(events: HistoryEvent[]): TrailStep[] {
  type OpenStep = TrailStep & { attempts: number };
  const steps: OpenStep[] = [];
  /** Steps still open, by the id of their latest event. */
  const open = new Map<number, OpenStep>();
  const ids = new Set(events.map((e) => e.id));
  events.forEach((e, i) => {
    if (e.type === 'TaskStateEntered') {
      const d = e.stateEnteredEventDetails;
      const step: OpenStep = {
        name: d?.name ?? '?',
        type: 'Task',
        enteredAt: new Date(e.timestamp!),
        input: parse(d?.input),
        retries: 0,
        attempts: 0,
      };
      steps.push(step);
      open.set(e.id!, step);
      return;
    }
    const previous = ids.has(e.previousEventId) ? e.previousEventId! : events[i - 1]?.id;
    const step = previous === undefined ? undefined : open.get(previous);
    if (!step) return;
    open.delete(previous!);
    if (SCHEDULED.has(e.type!)) {
      step.attempts++;
      step.input = parse(e.lambdaFunctionScheduledEventDetails?.input ?? e.taskScheduledEventDetails?.parameters);
    } else if (SUCCEEDED.has(e.type!)) {
      step.output = parse(e.lambdaFunctionSucceededEventDetails?.output ?? e.taskSucceededEventDetails?.output);
      delete step.error;
    } else if (failureOf(e)) {
      step.error = failureOf(e);
    } else if (e.type === 'TaskStateExited') {
      step.exitedAt = new Date(e.timestamp!);
      return;
    } else if (e.type === 'ExecutionFailed' && !step.error) {
      const d = e.executionFailedEventDetails;
      step.error = { error: d?.error ?? 'ExecutionFailed', ...(d?.cause !== undefined && { cause: d.cause }) };
    }
    open.set(e.id!, step);
  });
  return steps.map(({ attempts, ...step }) => {
    const out = step.output as { next?: unknown; reason?: unknown } | undefined;
    if (out && typeof out === 'object' && typeof out.next === 'string') step.next = out.next;
    if (out && typeof out === 'object' && typeof out.reason === 'string') step.reason = out.reason;
    return { ...step, retries: Math.max(0, attempts - 1) };
  });
}

/**
 * State transitions as Step Functions bills them for Standard workflows: every state entered,
 * plus every retry attempt of a Task.
 */
export function stateTransitions(events: HistoryEvent[]): number {
  const entered = events.filter((e) => e.type?.endsWith('StateEntered')).length;
  return entered + stepTrail(events).reduce((sum, step) => sum + step.retries, 0);
}

/** The first Task state's input as its first attempt was invoked (the state input if it never was): `stepTrail(events)[0].input` without the trail. */
function firstTaskInput(events: HistoryEvent[]): unknown {
  const i = events.findIndex((e) => e.type === 'TaskStateEntered');
  if (i < 0) return undefined;
  const entered = events[i]!;
  // Its own attempt, not a concurrent iteration's: chained to it (an event with no previous event id follows the one before it).
  const scheduled = events.find(
    (e, j) =>
      j > i && SCHEDULED.has(e.type!) && (e.previousEventId ? e.previousEventId : events[j - 1]!.id) === entered.id,
  );
  return parse(
    scheduled
      ? (scheduled.lambdaFunctionScheduledEventDetails?.input ?? scheduled.taskScheduledEventDetails?.parameters)
      : entered.stateEnteredEventDetails?.input,
  );
}

/**
 * The workflow an execution runs: the `workflow` of its first Task's input, else of the first Task invoked with one (a
 * step Lambda, or an event step's wait Task in its `Payload`): a workflow step's Task names none.
 */
function workflowOf(events: HistoryEvent[]): string | undefined {
  const first = (firstTaskInput(events) as { workflow?: unknown } | undefined)?.workflow;
  if (typeof first === 'string') return first;
  for (const e of events) {
    if (!SCHEDULED.has(e.type!)) continue;
    const input = parse(e.lambdaFunctionScheduledEventDetails?.input ?? e.taskScheduledEventDetails?.parameters) as
      | { workflow?: unknown; Payload?: { workflow?: unknown } }
      | undefined;
    const workflow = input?.workflow ?? input?.Payload?.workflow;
    if (typeof workflow === 'string') return workflow;
  }
  return undefined;
}

const TERMINAL: Record<string, ExecutionStatus> = {
  ExecutionSucceeded: 'SUCCEEDED',
  ExecutionFailed: 'FAILED',
  ExecutionTimedOut: 'TIMED_OUT',
  ExecutionAborted: 'ABORTED',
};

/** `…:execution:<sm>:<name>` or `…:express:<sm>:<name>:<id>` → `{ stateMachine ARN, name }`. */
export function parseExecutionArn(arn: string): { stateMachine: string; name: string } {
  const parts = arn.split(':');
  const kind = parts[5];
  if (
    parts[0] !== 'arn' ||
    parts[2] !== 'states' ||
    (kind !== 'execution' && kind !== 'express') ||
    !parts[6] ||
    !parts[7]
  ) {
    throw new InvalidInputError(`not a Step Functions execution ARN: ${arn}`);
  }
  return { stateMachine: [...parts.slice(0, 5), 'stateMachine', parts[6]].join(':'), name: parts[7] };
}

/** Build the execution record from its history events (status, dates, input, output, error all come from the events). */
export function summarizeExecution(executionArn: string, events: HistoryEvent[]): ExecutionRecord {
  const { stateMachine, name } = parseExecutionArn(executionArn);
  const started = events.find((e) => e.type === 'ExecutionStarted');
  const end = events.find((e) => e.type! in TERMINAL);
  const failure = end?.executionFailedEventDetails ?? end?.executionTimedOutEventDetails;
  const workflow = workflowOf(events);
  return {
    executionArn,
    name,
    stateMachine,
    ...(workflow && { workflow }),
    status: end ? TERMINAL[end.type!]! : 'RUNNING',
    startDate: new Date(started?.timestamp ?? 0),
    ...(end && { stopDate: new Date(end.timestamp!) }),
    input: parse(started?.executionStartedEventDetails?.input),
    ...(end?.type === 'ExecutionSucceeded' && { output: parse(end.executionSucceededEventDetails?.output) }),
    ...(failure && {
      error: { Error: failure.error ?? end!.type!, ...(failure.cause !== undefined && { Cause: failure.cause }) },
    }),
    events,
  };
}

const Timestamp = z.union([z.string(), z.number()]).transform((v) => new Date(v));
const RecordFile = z.object({
  executionArn: z.string(),
  name: z.string(),
  stateMachine: z.string(),
  workflow: z.string().optional(),
  status: z.enum(['RUNNING', 'SUCCEEDED', 'FAILED', 'TIMED_OUT', 'ABORTED']),
  startDate: Timestamp,
  stopDate: Timestamp.optional(),
  input: z.unknown(),
  output: z.unknown().optional(),
  error: z.object({ Error: z.string(), Cause: z.string().optional() }).optional(),
  events: z.array(z.looseObject({ id: z.number(), type: z.string(), timestamp: Timestamp })),
  parent: z
    .object({
      execution: z.string(),
      step: z.string(),
      index: z.number().int().nonnegative(),
      changes: z.array(z.object({ what: z.string(), from: z.unknown().optional(), to: z.unknown() })).optional(),
    })
    .optional(),
  imported: z.object({ from: z.enum(['file', 'aws']), at: z.string() }).optional(),
});

/** Why `file` cannot be a record: a symlink, a FIFO, a folder (only regular files are ever written as one). */
const notRegular = (file: string) => new InvalidInputError(`${file}: not a regular file`);

/** `text` (the content of `file`) parsed as JSON and checked with `schema`. */
function parseRecord<S extends z.ZodType>(file: string, text: string, schema: S): z.output<S> {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw new InvalidInputError(`${file}: not JSON (${(e as Error).message})`);
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new InvalidInputError(`${file}: ${issue.path.join('.') || '(root)'}: ${issue.message}`);
  }
  return parsed.data;
}

/**
 * A record the local runtime stored as `file`, parsed with `schema`. Only a regular file is read:
 * a symlink could lead out of the state folder and a FIFO would block the reader.
 * @throws InvalidInputError naming the file: not a regular file, not JSON, or the first field that does not match.
 */
export function readRecordFile<S extends z.ZodType>(file: string, schema: S): z.output<S> {
  if (!lstatSync(file).isFile()) throw notRegular(file);
  return parseRecord(file, readFileSync(file, 'utf8'), schema);
}

/** {@link readRecordFile} without blocking the event loop (Studio); undefined when there is no such file. */
export async function readRecordFileAsync<S extends z.ZodType>(
  file: string,
  schema: S,
): Promise<z.output<S> | undefined> {
  const stat = await lstat(file).catch((e: NodeJS.ErrnoException) => {
    if (e.code === 'ENOENT') return undefined;
    throw e;
  });
  if (!stat) return undefined;
  if (!stat.isFile()) throw notRegular(file);
  return parseRecord(file, await readFile(file, 'utf8'), schema);
}

/**
 * The file a record named `name` is stored in, in `dir`.
 * @throws InvalidInputError for a name that could point outside `dir` (a separator, `..`, a control character).
 */
export function recordFile(name: string, dir: string): string {
  if (!SAFE_RECORD_NAME.test(name))
    throw new InvalidInputError(`not a record name: ${JSON.stringify(name.slice(0, 100))}`);
  return join(resolve(dir), `${name}.json`);
}

/** The file a local execution is stored in. */
function localExecutionFile(name: string, dir: string = DEFAULT_HISTORY_DIR): string {
  return recordFile(name, dir);
}

/** Store a local execution as `<dir>/<name>.json`. */
export function writeLocalExecution(record: ExecutionRecord, dir: string = DEFAULT_HISTORY_DIR): string {
  const file = localExecutionFile(record.name, dir);
  mkdirSync(resolve(dir), { recursive: true });
  writeFileSync(file, JSON.stringify(record, null, 2) + '\n');
  return file;
}

/**
 * Read a local execution by name or execution ARN from `dir`.
 * @throws ExecutionDoesNotExist when there is no such file (or it belongs to another ARN); InvalidInputError when the file is not an execution record.
 */
export function readLocalExecution(nameOrArn: string, dir: string = DEFAULT_HISTORY_DIR): ExecutionRecord {
  const name = nameOrArn.startsWith('arn:') ? parseExecutionArn(nameOrArn).name : nameOrArn;
  const file = localExecutionFile(name, dir);
  const missing = () =>
    new ExecutionDoesNotExist({ $metadata: {}, message: `no local execution "${nameOrArn}" (looked for ${file})` });
  if (!existsSync(file)) throw missing();
  const record = readRecordFile(file, RecordFile) as ExecutionRecord;
  if (nameOrArn.startsWith('arn:') && record.executionArn !== nameOrArn) throw missing();
  return record;
}

/** Where a stored execution is kept: run here, or imported from AWS. */
export type ExecutionSource = 'local' | 'imported';

/**
 * Read an execution the local state keeps: a local one, else an imported deployed one; `source` names the folder
 * (an imported execution may have the name of a local one).
 * @throws ExecutionDoesNotExist when neither folder has it.
 */
export function readStoredExecution(
  name: string,
  dirs: Pick<StateDirs, 'executions' | 'imports'> = DEFAULT_STATE_DIRS,
  source?: ExecutionSource,
): ExecutionRecord {
  if (source) return readLocalExecution(name, source === 'local' ? dirs.executions : dirs.imports);
  try {
    return readLocalExecution(name, dirs.executions);
  } catch (e) {
    if (!(e instanceof ExecutionDoesNotExist)) throw e;
    try {
      return readLocalExecution(name, dirs.imports);
    } catch (imported) {
      if (imported instanceof ExecutionDoesNotExist) throw e;
      throw imported;
    }
  }
}

/**
 * {@link readStoredExecution} without blocking (Studio): the record and the folder it came from.
 * @throws ExecutionDoesNotExist when neither folder (or not the one `source` names) has it.
 */
export async function readStoredExecutionAsync(
  name: string,
  dirs: Pick<StateDirs, 'executions' | 'imports'>,
  source?: ExecutionSource,
): Promise<{ record: ExecutionRecord; source: ExecutionSource }> {
  const folders = (['local', 'imported'] as const).filter((s) => !source || s === source);
  for (const from of folders) {
    const record = await readRecordFileAsync(
      recordFile(name, from === 'local' ? dirs.executions : dirs.imports),
      RecordFile,
    );
    if (record) return { record: record as ExecutionRecord, source: from };
  }
  throw new ExecutionDoesNotExist({
    $metadata: {},
    message: `no ${source === 'imported' ? 'imported' : source === 'local' ? 'local' : 'local or imported'} execution "${name}"`,
  });
}

/**
 * Read a deployed execution: every page of `GetExecutionHistory`, summarized like a local one.
 * @example readAwsExecution(arn, new SFNClient({ region: 'eu-west-1' }))
 */
export async function readAwsExecution(executionArn: string, client: SFNClient): Promise<ExecutionRecord> {
  parseExecutionArn(executionArn);
  const events: HistoryEvent[] = [];
  let nextToken: string | undefined;
  do {
    const page = await client.send(new GetExecutionHistoryCommand({ executionArn, nextToken, maxResults: 1000 }));
    events.push(...(page.events ?? []));
    nextToken = page.nextToken;
  } while (nextToken);
  return summarizeExecution(executionArn, events);
}
