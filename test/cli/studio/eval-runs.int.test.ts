/**
 * A failed eval case links to what ran: the run keeps each case's execution with the local ones,
 * named by the run and the case, the kept run names it, and Studio gives it with the run (the page
 * links it: browser.int.test.ts).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type Studio, startStudio } from '../../../src/cli/studio/server.ts';
import { loadEvalCases } from '../../../src/definitions/eval-cases.ts';
import { loadWorkflow } from '../../../src/definitions/workflow/loader.ts';
import { evalRunId, recordEvalRun } from '../../../src/evals/eval-runs.ts';
import { evalExecutionName, runEvalCases } from '../../../src/evals/runner.ts';
import { readLocalExecution } from '../../../src/local/records/history.ts';
import { stateDirs } from '../../../src/local/records/state-dirs.ts';

const root = mkdtempSync(join(tmpdir(), 'stepwise-eval-links-'));
const dirs = stateDirs(root);
let studio: Studio | undefined;
afterAll(async () => {
  await studio?.close();
  rmSync(root, { recursive: true, force: true });
});

describe('a failed eval case', () => {
  it('names the execution it was judged on, whose history is kept, and Studio gives it with the run', {
    timeout: 180_000,
  }, async () => {
    const [first] = loadEvalCases(loadWorkflow('case-desk').dir);
    // The case ran as it always does; only what it expects is wrong, so it fails.
    const failing = { ...first!, expected_output: { ...first!.expected_output, status: 'FAILED' as const } };
    const started = new Date('2026-03-14T10:00:00Z');
    const runId = evalRunId(started);
    const report = await runEvalCases('case-desk', [failing], {
      keep: { dir: dirs.executions, runId },
      session: { logLevel: 'SILENT' },
    });
    const [result] = report.cases;
    expect(result!.passed).toBe(false);
    expect(result!.execution).toBe(evalExecutionName(runId, failing.scenario_id));
    const kept = readLocalExecution(result!.execution!, dirs.executions);
    expect([kept.name, kept.workflow, kept.status]).toEqual([result!.execution, 'case-desk', 'SUCCEEDED']);
    expect(kept.executionArn.endsWith(`:${result!.execution}`)).toBe(true);

    const run = recordEvalRun('case-desk', report, [failing], 'offline', dirs.evals, started);
    studio = await startStudio({ port: 0, dirs });
    const get = async (path: string) => (await fetch(`${studio!.url}api/${path}`)).json();
    const stored = (await get(`evals/case-desk/${run.id}`)) as { cases: { execution?: string }[] };
    expect(stored.cases[0]!.execution).toBe(result!.execution);
    const opened = (await get(`executions/${encodeURIComponent(result!.execution!)}`)) as { record: { name: string } };
    expect(opened.record.name).toBe(result!.execution);
  });
});
