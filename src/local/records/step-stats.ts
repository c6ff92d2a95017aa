/**
 * Step statistics over stored executions: which steps run most, where failures and hand-offs
 * occur, duration and tokens per step. Pure over execution records; the CLI (`stepwise stats`)
 * reads them from the local history folder.
 */
import { existsSync, readdirSync } from 'node:fs';
import { basename } from 'node:path';
import type { StepInput, StepOutput } from '../../runtime/contracts/step.ts';
import { FAST_PATH_REASON } from '../../runtime/steps/fast-path.ts';
import { DEFAULT_HISTORY_DIR, type ExecutionRecord, readLocalExecution, stepTrail } from './history.ts';

/** One step across executions. */
export interface StepStats {
  step: string;
  /** Times the step ran (an execution that ran it twice counts twice). */
  runs: number;
  /** Consensus steps: the samples taken over all runs (their model calls are in the step's `modelCalls`). */
  samples: number;
  /** Runs that ended in an error (after retries): caught to the fallback or ending the execution. */
  failures: number;
  /** Attempts after the first (ASL Retry). */
  retries: number;
  /**
   * Runs that handed the case to a person: the fallback reached through a Catch, the Choice default or a `handoff`
   * report.
   */
  handoffs: number;
  /** Runs by who decided the route (`model`, `code`, `offline`, ...); fast-path decisions are `fast-path`. */
  decidedBy: Record<string, number>;
  /** Where the step routed to, by count. */
  routes: Record<string, number>;
  meanDurationMs: number;
  maxDurationMs: number;
  modelCalls: number;
  inputTokens: number;
  outputTokens: number;
  cacheReadInputTokens: number;
  cacheWriteInputTokens: number;
}

export interface WorkflowStats {
  executions: number;
  byStatus: Record<string, number>;
  /** Most-run first. */
  steps: StepStats[];
}

const bump = (counts: Record<string, number>, key: string) => {
  counts[key] = (counts[key] ?? 0) + 1;
};

/** A consensus sample's Task (`<step>.wave-<n>.sample`): the step's Lambda, once per sample. */
const SAMPLE = /^(.+)\.wave-\d+\.sample$/;

/**
 * Aggregate executions per step. The fallback step is taken from the executions themselves: a
 * step entered with an `error` or reached when the previous step routed elsewhere. States the
 * compiler generates around steps (their names hold a dot, step names never do) are no steps: a
 * consensus sample counts as a sample of its step, whose own output already adds up the samples'
 * model calls and tokens; tallies and checkpoints are left out.
 * @param paused the executions waiting at a checkpoint (counted as `PAUSED`).
 */
export function stepStats(records: readonly ExecutionRecord[], paused: ReadonlySet<string> = new Set()): WorkflowStats {
  const byStatus: Record<string, number> = {};
  const steps = new Map<string, StepStats & { totalMs: number; timed: number }>();
  const of = (name: string) =>
    steps.get(name) ??
    (steps.set(name, {
      step: name,
      runs: 0,
      samples: 0,
      failures: 0,
      retries: 0,
      handoffs: 0,
      decidedBy: {},
      routes: {},
      meanDurationMs: 0,
      maxDurationMs: 0,
      modelCalls: 0,
      inputTokens: 0,
      outputTokens: 0,
      cacheReadInputTokens: 0,
      cacheWriteInputTokens: 0,
      totalMs: 0,
      timed: 0,
    }),
    steps.get(name)!);
  for (const record of records) {
    // A paused execution waits at a checkpoint: it is not running.
    bump(byStatus, record.status === 'RUNNING' && paused.has(record.name) ? 'PAUSED' : record.status);
    for (const trail of stepTrail(record.events)) {
      const sampled = SAMPLE.exec(trail.name)?.[1];
      if (sampled !== undefined) of(sampled).samples++;
      if (trail.name.includes('.')) continue;
      const s = of(trail.name);
      s.runs++;
      s.retries += trail.retries;
      if (trail.error) s.failures++;
      const input = trail.input as Partial<StepInput> | undefined;
      const out = trail.output as StepOutput | undefined;
      const caught =
        input?.error != null ||
        (input?.previous !== undefined && input.previous.next !== trail.name && input.previous.step !== null);
      if (caught || out?.fields?.handoff === true) s.handoffs++;
      if (!out || typeof out !== 'object' || !out.usage) continue;
      bump(s.decidedBy, out.reason?.startsWith(FAST_PATH_REASON) ? 'fast-path' : (out.decidedBy ?? 'unknown'));
      bump(s.routes, out.next);
      if (typeof out.durationMs === 'number') {
        s.totalMs += out.durationMs;
        s.timed++;
        s.maxDurationMs = Math.max(s.maxDurationMs, out.durationMs);
      }
      s.modelCalls += out.usage.modelCalls;
      s.inputTokens += out.usage.inputTokens;
      s.outputTokens += out.usage.outputTokens;
      s.cacheReadInputTokens += out.usage.cacheReadInputTokens;
      s.cacheWriteInputTokens += out.usage.cacheWriteInputTokens;
    }
  }
  const list = [...steps.values()].map(({ totalMs, timed, ...s }) => ({
    ...s,
    meanDurationMs: timed ? totalMs / timed : 0,
  }));
  return {
    executions: records.length,
    byStatus,
    steps: list.sort((a, b) => b.runs - a.runs || a.step.localeCompare(b.step)),
  };
}

/** The stored local executions of a workflow (all workflows without one); unreadable files are skipped and counted. */
export function readLocalExecutions(
  workflow: string | undefined,
  dir: string = DEFAULT_HISTORY_DIR,
): { records: ExecutionRecord[]; unreadable: number } {
  if (!existsSync(dir)) return { records: [], unreadable: 0 };
  const records: ExecutionRecord[] = [];
  let unreadable = 0;
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.json'))) {
    try {
      const record = readLocalExecution(basename(file, '.json'), dir);
      if (workflow === undefined || record.workflow === workflow) records.push(record);
    } catch {
      unreadable++;
    }
  }
  return { records, unreadable };
}
