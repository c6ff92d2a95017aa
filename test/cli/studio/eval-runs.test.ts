import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadEvalCases } from '../../../src/definitions/eval-cases.ts';
import { loadWorkflow } from '../../../src/definitions/workflow/loader.ts';
import { diffEvalRuns, evalRunId, listEvalRuns, readEvalRun, recordEvalRun } from '../../../src/evals/eval-runs.ts';
import { type EvalReport, evalExecutionName } from '../../../src/evals/runner.ts';

const dir = mkdtempSync(join(tmpdir(), 'stepwise-evals-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const cases = loadEvalCases(loadWorkflow('case-desk').dir).slice(0, 2);
const step = (name: string, next: string) => ({
  name,
  next,
  decidedBy: 'offline' as const,
  fields: {},
  usage: { modelCalls: 1, inputTokens: 0, outputTokens: 0, cacheReadInputTokens: 0, cacheWriteInputTokens: 0 },
});
const report = (passed: boolean[]): EvalReport => ({
  passed: passed.filter(Boolean).length,
  failed: passed.filter((p) => !p).length,
  total: passed.length,
  cases: cases.map((c, i) => ({
    id: c.scenario_id,
    passed: passed[i]!,
    failures: [],
    steps: [step('01-read-request', passed[i] ? '02-look-up' : '04-hand-off')],
  })),
});

describe('eval runs', () => {
  it('keeps each run with the expected trail of every case, lists them newest first, and reads one back', () => {
    const first = recordEvalRun(
      'case-desk',
      report([true, true]),
      cases,
      'offline',
      dir,
      new Date('2025-03-14T10:00:00Z'),
    );
    const second = recordEvalRun(
      'case-desk',
      report([true, false]),
      cases,
      'offline',
      dir,
      new Date('2025-03-14T11:00:00Z'),
    );
    expect(listEvalRuns('case-desk', dir).map((r) => r.id)).toEqual([second.id, first.id]);
    expect(readEvalRun('case-desk', first.id, dir).expected[cases[0]!.scenario_id]).toEqual(
      cases[0]!.expected_output.expected_steps!.map((s) => s.step_name),
    );
    expect(listEvalRuns('consensus-pick', dir)).toEqual([]);
  });

  it('diffs two runs: the cases whose verdict changed and those that took another route', () => {
    const [b, a] = listEvalRuns('case-desk', dir);
    const diff = diffEvalRuns(a!, b!);
    expect(diff.changed).toEqual([{ id: cases[1]!.scenario_id, a: true, b: false }]);
    expect(diff.routeDifferences.map((d) => d.id)).toEqual([cases[1]!.scenario_id]);
    expect(diff.passRate).toEqual({ a: 1, b: 0.5 });
  });

  it('keeps the name of the execution each case ran, named by the run (its start) and the case', () => {
    const started = new Date('2025-03-15T09:30:00Z');
    const id = evalRunId(started);
    const ran = report([false, true]);
    ran.cases[0]!.execution = evalExecutionName(id, cases[0]!.scenario_id);
    const run = recordEvalRun('case-desk', ran, cases, 'offline', join(dir, 'named'), started);
    expect(run.id).toBe('2025-03-15T09-30-00.000Z');
    expect(readEvalRun('case-desk', run.id, join(dir, 'named')).cases[0]!.execution).toBe(
      `eval-2025-03-15T09-30-00.000Z-${cases[0]!.scenario_id}`,
    );
    expect(evalExecutionName(id, 'chat_001', 2)).toBe('eval-2025-03-15T09-30-00.000Z-chat_001-t2');
  });

  it.each(['../executions', '..', 'a/b'])(
    'refuses a workflow or run name that points outside its folder: %s',
    (name) => {
      expect(() => listEvalRuns(name, dir)).toThrow(/not a workflow name/);
      expect(() => readEvalRun('case-desk', name, dir)).toThrow(/not a record name/);
    },
  );
});
