/**
 * Task-token pauses for the local runtime. aws-local-stepfunctions has no task tokens, so a
 * `.waitForTaskToken` Task is run like this:
 *
 * - **Suspend.** When an execution reaches such a Task, the runtime records what the Task was
 *   given (its state input and its effective `Parameters`: for a Stepwise checkpoint the event
 *   `detail` with the required actions), aborts the interpreter and persists a {@link PausedTask}
 *   here: `.stepwise/pauses/<execution>.json`, with the history so far. The execution's record in
 *   `.stepwise/executions/` says `RUNNING`, as `DescribeExecution` would.
 * - **Resume.** In any later process, `LocalRuntime.resumeExecution` runs the same synthesized ASL
 *   with `StartAt` rewritten to the paused Task and the persisted state input as input. The Task
 *   then completes with the resumer's output (`SendTaskSuccess`), fails with its error
 *   (`SendTaskFailure`), or times out (`States.Timeout`) when its `TimeoutSeconds` (from the pause)
 *   or `HeartbeatSeconds` (from the last heartbeat) have passed: Retry/Catch apply as deployed. The
 *   new events are appended to the persisted history, so the execution keeps one history.
 *
 * Limits: nothing runs while an execution is paused, so a timeout is noticed when someone resumes
 * (or heartbeats) after it; the timeout resolution then replaces what they sent. The pause Task
 * is not invoked (no event is published); a Task inside a Map iteration or Parallel branch cannot
 * pause (refused, as the interpreter cannot restart inside one). `$$.Task.Token` is a local token
 * per run, and the resumed run's `$$.Execution.Input`/`StartTime` are the original execution's.
 * Only what is in the state survives: DynamoDB Local data of the first process does not.
 */
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { ExecutionDoesNotExist, type HistoryEvent, InvalidName, TaskTimedOut } from '@aws-sdk/client-sfn';
import * as z from 'zod';
import { ExecutionClaimedError } from '../../core/errors.ts';
import { readRecordFile } from './history.ts';
import { DEFAULT_STATE_DIRS } from './state-dirs.ts';

/** Where paused local executions are kept, one JSON file each (`.stepwise/` is git-ignored). */
export const DEFAULT_PAUSES_DIR = DEFAULT_STATE_DIRS.pauses;

/** Step Functions execution names: 1-80 characters, none of whitespace, brackets, wildcards, or `"#%\\^|~`$&,;:/`, no control characters. */
const EXECUTION_NAME = /^[^\s<>{}[\]?*"#%\\^|~`$&,;:/\u0000-\u001f\u007f-\u009f]{1,80}$/;

/**
 * A name Step Functions accepts, and not one of dots only: local executions are files named after
 * them, so no name may reach outside their folder (`../x`, `..`).
 */
export const isExecutionName = (name: string): boolean => EXECUTION_NAME.test(name) && !/^\.+$/.test(name);

/** @throws InvalidName for a name that is not an execution name (`isExecutionName`), before it is used in any path. */
export function checkExecutionName(name: string): void {
  if (!isExecutionName(name)) throw new InvalidName({ $metadata: {}, message: `Invalid Execution Name: '${name}'` });
}

/** A Task resource that waits for a task token. */
export const WAIT_FOR_TASK_TOKEN = /\.waitForTaskToken(:\d+)?$/;

/** How a paused Task ends: `SendTaskSuccess` (output), `SendTaskFailure` (error, cause), or its timeout. */
export type Resolution = { output: unknown } | { error: string; cause?: string } | { timeout: true };

const Timestamp = z.string().refine((v) => !Number.isNaN(Date.parse(v)), 'an ISO date');

const PausedTaskSchema = z.object({
  executionArn: z.string(),
  name: z.string(),
  stateMachine: z.string(),
  /** The stack of the state machine (placeholder ARNs of different stacks can be equal). */
  stack: z.string(),
  workflow: z.string().optional(),
  /** The paused Task state. */
  state: z.string(),
  /** Its state input: the resumed run's input. */
  stateInput: z.unknown(),
  /** What a Stepwise checkpoint publishes (the event's `detail`), or the Task's effective `Parameters`. */
  request: z.unknown(),
  taskToken: z.string(),
  pausedAt: Timestamp,
  lastHeartbeatAt: Timestamp,
  timeoutSeconds: z.number().positive().optional(),
  heartbeatSeconds: z.number().positive().optional(),
  executionInput: z.unknown(),
  startTime: Timestamp,
  events: z.array(
    z.looseObject({
      id: z.number(),
      type: z.string(),
      timestamp: z.union([z.string(), z.number()]).transform((v) => new Date(v)),
    }),
  ),
});

/** A suspended execution, as persisted in `<pausesDir>/<name>.json`. */
export type PausedTask = Omit<z.infer<typeof PausedTaskSchema>, 'events'> & { events: HistoryEvent[] };

/**
 * The checkpoint detail of a `events:putEvents` pause (its first entry's `Detail`), else the Task's effective
 * parameters.
 */
export function requestOf(parameters: unknown): unknown {
  const entries = (parameters as { Entries?: { Detail?: unknown }[] } | undefined)?.Entries;
  const detail = Array.isArray(entries) ? entries[0]?.Detail : undefined;
  if (typeof detail === 'string') {
    try {
      return JSON.parse(detail);
    } catch {
      return detail;
    }
  }
  return detail ?? parameters;
}

/**
 * When the paused Task times out: its `TimeoutSeconds` after the pause, or `HeartbeatSeconds` after the last heartbeat,
 * whichever is first.
 */
export function deadline(
  task: Pick<PausedTask, 'pausedAt' | 'lastHeartbeatAt' | 'timeoutSeconds' | 'heartbeatSeconds'>,
): { at: Date; heartbeat: boolean } | undefined {
  const candidates = [
    task.timeoutSeconds !== undefined && {
      at: Date.parse(task.pausedAt) + task.timeoutSeconds * 1000,
      heartbeat: false,
    },
    task.heartbeatSeconds !== undefined && {
      at: Date.parse(task.lastHeartbeatAt) + task.heartbeatSeconds * 1000,
      heartbeat: true,
    },
  ].filter((c): c is { at: number; heartbeat: boolean } => Boolean(c));
  if (!candidates.length) return undefined;
  const first = candidates.reduce((a, b) => (b.at < a.at ? b : a));
  return { at: new Date(first.at), heartbeat: first.heartbeat };
}

/**
 * The timeout error of a Task past its deadline at `now` (the runtime's convention: `States.Timeout`, which a
 * `States.HeartbeatTimeout` Catch also matches).
 */
export function expiredAt(task: PausedTask, now: Date): { error: string; cause: string } | undefined {
  const due = deadline(task);
  if (!due || now.getTime() < due.at.getTime()) return undefined;
  const what = due.heartbeat
    ? `no heartbeat within HeartbeatSeconds (${task.heartbeatSeconds})`
    : `not resumed within TimeoutSeconds (${task.timeoutSeconds})`;
  return { error: 'States.Timeout', cause: `${task.state}: ${what}; timed out at ${due.at.toISOString()}` };
}

/**
 * The history of a suspended run: everything up to the paused Task's `TaskStarted` (the
 * interpreter's `ExecutionAborted` is how the runtime stopped it, not an event of the execution).
 */
export function suspendedHistory(events: HistoryEvent[], state: string): HistoryEvent[] {
  const entered = events.findLastIndex(
    (e) => e.type === 'TaskStateEntered' && e.stateEnteredEventDetails?.name === state,
  );
  const started = events.findIndex((e, i) => i > entered && e.type === 'TaskStarted');
  return events.slice(0, (started < 0 ? entered : started) + 1);
}

/**
 * Append a resumed run's events to the persisted history: the resumed run starts by entering the
 * paused Task again (`ExecutionStarted`, `TaskStateEntered`, `TaskScheduled`, `TaskStarted`), which
 * the history already has, so those are dropped and the rest renumbered after it.
 */
export function appendResumed(before: HistoryEvent[], resumed: HistoryEvent[]): HistoryEvent[] {
  return appendContinued(before, resumed, resumed.findIndex((e) => e.type === 'TaskStarted') + 1);
}

/**
 * `before`, then the events of a run that continues it without its first `dropped` events (those
 * repeat what `before` has), renumbered after it; events that pointed at a dropped one point at
 * the last of `before`. A fork drops only its `ExecutionStarted`.
 */
export function appendContinued(before: HistoryEvent[], after: HistoryEvent[], dropped: number): HistoryEvent[] {
  const base = before.at(-1)?.id ?? 0;
  const renumber = (id: number | undefined) => (id === undefined || id <= dropped ? base : id - dropped + base);
  return [
    ...before,
    ...after.slice(dropped).map((e) => ({ ...e, id: renumber(e.id), previousEventId: renumber(e.previousEventId) })),
  ];
}

const ClaimSchema = z.object({ pid: z.number().int(), host: z.string(), at: Timestamp });

/**
 * Paused executions: files under `dir` (readable by any later process), or only in memory when
 * `dir` is `false` (evals, which resume in the same process). Every name is checked
 * (`checkExecutionName`) before it becomes a path.
 *
 * A task token is used once: whoever resumes or heartbeats a pause first claims it
 * (`claim`, an exclusive create of `<name>.claim`), so of concurrent resumers, in one process or
 * many, exactly one runs the rest of the execution; the others are refused.
 */
export class PauseStore {
  private readonly memory = new Map<string, PausedTask>();
  private readonly claimed = new Set<string>();
  private readonly resumed = new Map<string, string>();

  constructor(private readonly dir: string | false = DEFAULT_PAUSES_DIR) {}

  private file(name: string, extension = 'json'): string {
    checkExecutionName(name);
    return join(resolve(this.dir as string), `${name}.${extension}`);
  }

  save(task: PausedTask): void {
    checkExecutionName(task.name);
    this.memory.set(task.name, task);
    if (this.dir === false) return;
    mkdirSync(resolve(this.dir), { recursive: true });
    writeFileSync(this.file(task.name), JSON.stringify(task, null, 2) + '\n');
  }

  /** The paused execution of this name; undefined when it is not paused. @throws InvalidInputError for a file that is no paused execution; InvalidName for a name that is none. */
  get(name: string): PausedTask | undefined {
    checkExecutionName(name);
    if (this.dir === false || this.memory.has(name)) return this.memory.get(name);
    const file = this.file(name);
    if (!existsSync(file)) return undefined;
    return readRecordFile(file, PausedTaskSchema) as unknown as PausedTask;
  }

  /**
   * The paused execution of this name.
   * @throws ExecutionClaimedError when a resume already ran it to its end (a resumer that lost the race learns that,
   * not that it never existed); ExecutionDoesNotExist when it is not paused.
   */
  require(name: string): PausedTask {
    const paused = this.get(name);
    if (paused) return paused;
    const resumed = this.resumedBy(name);
    if (resumed)
      throw new ExecutionClaimedError(
        `execution "${name}" was already resumed (${resumed}); its task token can be used once`,
      );
    throw new ExecutionDoesNotExist({
      $metadata: {},
      message: `no paused local execution "${name}" (stepwise executions lists them)`,
    });
  }

  /**
   * Claim the pause for one resumer: returns the function that releases the claim (call it once
   * the resumed run has saved its next pause or deleted this one). A claim left by a process that
   * died is not taken over: part of the run may have happened, so a person decides (the message
   * says which file to delete).
   * @throws ExecutionClaimedError when another call holds the claim.
   */
  claim(name: string): () => void {
    checkExecutionName(name);
    const refused = (by: string) =>
      new ExecutionClaimedError(
        `execution "${name}" is already being resumed (${by}); its task token can be used once`,
      );
    if (this.dir === false) {
      if (this.claimed.has(name)) throw refused('by another call in this process');
      this.claimed.add(name);
      return () => this.claimed.delete(name);
    }
    mkdirSync(resolve(this.dir), { recursive: true });
    const file = this.file(name, 'claim');
    let fd: number;
    try {
      fd = openSync(file, 'wx');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      throw refused(claimHolder(file));
    }
    try {
      writeSync(fd, JSON.stringify({ pid: process.pid, host: hostname(), at: new Date().toISOString() }));
    } finally {
      closeSync(fd);
    }
    return () => rmSync(file, { force: true });
  }

  /** Every paused execution, oldest pause first. */
  list(): PausedTask[] {
    const names =
      this.dir === false || !existsSync(this.dir)
        ? [...this.memory.keys()]
        : readdirSync(this.dir)
            .filter((f) => f.endsWith('.json'))
            .map((f) => f.slice(0, -5))
            .filter(isExecutionName);
    return names
      .map((n) => this.get(n))
      .filter((t): t is PausedTask => t !== undefined)
      .sort((a, b) => Date.parse(a.pausedAt) - Date.parse(b.pausedAt));
  }

  /**
   * `SendTaskHeartbeat`: restart the paused Task's `HeartbeatSeconds` from `now`.
   * @throws ExecutionDoesNotExist when it is not paused; TaskTimedOut when it already timed out (resume it to run the timeout path).
   */
  heartbeat(name: string, now: Date = new Date()): PausedTask {
    // Claimed too: a heartbeat saved after a resume finished would bring the pause back.
    const release = this.claim(name);
    try {
      const paused = this.require(name);
      const expired = expiredAt(paused, now);
      if (expired)
        throw new TaskTimedOut({ $metadata: {}, message: `${expired.cause}: resume it to run the timeout path` });
      const beat = { ...paused, lastHeartbeatAt: now.toISOString() };
      this.save(beat);
      return beat;
    } finally {
      release();
    }
  }

  /** A resume ran the execution past its pause: the pause goes, and a note of who resumed it stays for later resumers. */
  delete(name: string): void {
    checkExecutionName(name);
    this.memory.delete(name);
    const by = `by process ${process.pid} on ${hostname()}, ended ${new Date().toISOString()}`;
    this.resumed.set(name, by);
    if (this.dir === false) return;
    writeFileSync(this.file(name, 'resumed'), JSON.stringify({ by }));
    rmSync(this.file(name), { force: true });
  }

  /** Who resumed a pause that is gone, if a resume removed it. */
  private resumedBy(name: string): string | undefined {
    if (this.dir === false || this.resumed.has(name)) return this.resumed.get(name);
    try {
      return ResumedSchema.parse(JSON.parse(readFileSync(this.file(name, 'resumed'), 'utf8'))).by;
    } catch {
      return undefined;
    }
  }
}

const ResumedSchema = z.object({ by: z.string() });

/** Who holds a claim file, for the refusal; a holder on this host that is no longer running is named as such. */
function claimHolder(file: string): string {
  let holder: z.infer<typeof ClaimSchema>;
  try {
    holder = ClaimSchema.parse(JSON.parse(readFileSync(file, 'utf8')));
  } catch {
    // Created but not yet written: its holder is starting right now.
    return 'by another process';
  }
  const by = `by process ${holder.pid} on ${holder.host} since ${holder.at}`;
  if (holder.host !== hostname() || isRunning(holder.pid)) return by;
  return `${by}, which is no longer running: delete ${file} to resume it again`;
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}
