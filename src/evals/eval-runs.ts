/**
 * Eval runs in the local state: every `stepwise eval` run of a workflow is kept as
 * `.stepwise/evals/<workflow>/<run>.json` (the report, the model, and each case's expected step
 * trail as the case said it then), so Studio shows the latest runs and the diff between two. The
 * executions a run's cases ran are kept with the other local executions, named by run and case
 * (`evalExecutionName` in runner.ts), so a failed case links to what ran.
 */
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as z from 'zod';
import { InvalidInputError } from '../core/errors.ts';
import type { EvalCase } from '../definitions/eval-cases.ts';
import { readRecordFile, recordFile } from '../local/records/history.ts';
import { DEFAULT_STATE_DIRS, SAFE_RECORD_NAME } from '../local/records/state-dirs.ts';
import { compareEvalRuns, type EvalComparison } from './compare.ts';
import type { EvalReport } from './runner.ts';

/** One stored eval run. */
export interface EvalRun extends EvalReport {
  /** `<ISO time with - for :>`: sorts by time, and is a file name. */
  id: string;
  workflow: string;
  at: string;
  model: string;
  /** Each case's expected step trail (`expected_steps`), by case id; absent for a case that checks no steps. */
  expected: Record<string, string[]>;
}

const EvalRunSchema = z.looseObject({
  id: z.string(),
  workflow: z.string(),
  at: z.string(),
  model: z.string(),
  passed: z.number(),
  failed: z.number(),
  total: z.number(),
  cases: z.array(
    z.looseObject({
      id: z.string(),
      passed: z.boolean(),
      execution: z.string().optional(),
      failures: z.array(z.unknown()),
      steps: z.array(z.looseObject({ name: z.string() })),
    }),
  ),
  expected: z.record(z.string(), z.array(z.string())),
});

/** The id of a run started at `at`: its ISO time with `-` for `:` (sorts by time, and is a file name). */
export const evalRunId = (at: Date): string => at.toISOString().replace(/:/g, '-');

/** Keep an eval run of `workflow` (in `dir`/<workflow>/); `now` is when it started (its id, {@link evalRunId}). */
export function recordEvalRun(
  workflow: string,
  report: EvalReport,
  cases: readonly EvalCase[],
  model: string,
  dir: string = DEFAULT_STATE_DIRS.evals,
  now: Date = new Date(),
): EvalRun {
  const run: EvalRun = {
    id: evalRunId(now),
    workflow,
    at: now.toISOString(),
    model,
    ...report,
    expected: Object.fromEntries(
      cases.flatMap((c) =>
        c.expected_output.expected_steps
          ? [[c.scenario_id, c.expected_output.expected_steps.map((s) => s.step_name)]]
          : [],
      ),
    ),
  };
  const folder = evalFolder(workflow, dir);
  mkdirSync(folder, { recursive: true });
  writeFileSync(recordFile(run.id, folder), JSON.stringify(run, null, 2) + '\n');
  return run;
}

/** The stored runs of a workflow, newest first (`limit` of them). */
export function listEvalRuns(workflow: string, dir: string = DEFAULT_STATE_DIRS.evals, limit = 20): EvalRun[] {
  const folder = evalFolder(workflow, dir);
  if (!existsSync(folder)) return [];
  return readdirSync(folder)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .reverse()
    .slice(0, limit)
    .map((f) => readEvalRun(workflow, f.slice(0, -5), dir));
}

/** One stored run. @throws InvalidInputError for a run that is not there or not an eval run. */
export function readEvalRun(workflow: string, id: string, dir: string = DEFAULT_STATE_DIRS.evals): EvalRun {
  return readRecordFile(recordFile(id, evalFolder(workflow, dir)), EvalRunSchema) as unknown as EvalRun;
}

/** A workflow's folder of runs. @throws InvalidInputError for a name that could point outside `dir`. */
function evalFolder(workflow: string, dir: string): string {
  if (!SAFE_RECORD_NAME.test(workflow))
    throw new InvalidInputError(`not a workflow name: ${JSON.stringify(workflow.slice(0, 100))}`);
  return join(dir, workflow);
}

/** Two runs of the same cases: what `compareEvalRuns` says, and the cases whose verdict changed. */
export interface EvalRunDiff extends EvalComparison {
  changed: { id: string; a: boolean | null; b: boolean | null }[];
}

export function diffEvalRuns(a: EvalRun, b: EvalRun): EvalRunDiff {
  const verdicts = (run: EvalRun) => new Map(run.cases.map((c) => [c.id, c.passed]));
  const [va, vb] = [verdicts(a), verdicts(b)];
  const ids = [...new Set([...va.keys(), ...vb.keys()])].sort();
  return {
    ...compareEvalRuns(a, b),
    changed: ids
      .filter((id) => va.get(id) !== vb.get(id))
      .map((id) => ({ id, a: va.get(id) ?? null, b: vb.get(id) ?? null })),
  };
}
