/** `stepwise stats`: per-step figures over the executions a local session stored. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadWorkflow } from '../../../src/definitions/workflow/loader.ts';
import { readLocalExecutions, stepStats } from '../../../src/local/records/step-stats.ts';
import { WorkflowSession } from '../../../src/local/sessions/workflow-session.ts';

const dir = mkdtempSync(join(tmpdir(), 'stepwise-stats-'));
const samples = join(loadWorkflow('case-desk').dir, 'samples');

describe('step statistics', () => {
  beforeAll(async () => {
    const session = await WorkflowSession.start({ workflow: 'case-desk', logLevel: 'SILENT', historyDir: dir });
    try {
      for (const sample of ['valid', 'missing-ref', 'out-of-scope'])
        await session.deliverFile(join(samples, `${sample}.eml`));
    } finally {
      await session.close();
    }
    writeFileSync(join(dir, 'broken.json'), '{ not json');
  }, 120_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('counts runs, routes, deciders and model calls per step, most-run first', () => {
    const { records, unreadable } = readLocalExecutions('case-desk', dir);
    expect(unreadable).toBe(1);
    const stats = stepStats(records);
    expect(stats).toMatchObject({ executions: 3, byStatus: { SUCCEEDED: 3 } });
    const of = (step: string) => stats.steps.find((s) => s.step === step)!;
    expect(stats.steps[0]!.step).toBe('01-read-request');
    expect(of('01-read-request')).toMatchObject({
      runs: 3,
      failures: 0,
      routes: { '02-look-up': 1, '03c-ask-ref': 1, '04-hand-off': 1 },
      // The clear request by the fast path; the one without a reference and the out-of-scope mail by the model.
      decidedBy: { 'fast-path': 1, offline: 2 },
      modelCalls: 2,
    });
    expect(of('03a-open-case')).toMatchObject({ runs: 1, modelCalls: 1, decidedBy: { offline: 1 } });
    expect(of('04-hand-off')).toMatchObject({ runs: 1, handoffs: 0 });
    expect(of('05-confirm').meanDurationMs).toBeGreaterThan(0);
  });

  it('filters by workflow', () => {
    expect(readLocalExecutions('another-workflow', dir).records).toEqual([]);
  });
});

describe('step statistics of a consensus step', () => {
  const voted = mkdtempSync(join(tmpdir(), 'stepwise-stats-consensus-'));
  let usage = 0;
  beforeAll(async () => {
    const session = await WorkflowSession.start({ workflow: 'consensus-pick', logLevel: 'SILENT', historyDir: voted });
    try {
      const result = await session.runFiles([join(loadWorkflow('consensus-pick').dir, 'samples', 'vote.json')]);
      usage = result[0]!.usage!.modelCalls;
    } finally {
      await session.close();
    }
  }, 120_000);
  afterAll(() => rmSync(voted, { recursive: true, force: true }));

  it('counts samples as samples of their step (not as steps or hand-offs), with no NaN and each model call once', () => {
    const stats = stepStats(readLocalExecutions('consensus-pick', voted).records);
    expect(stats.steps.map((s) => s.step).sort()).toEqual(['01-start', '02-pick', '03-run', '04-reflect', '05-answer']);
    const pick = stats.steps.find((s) => s.step === '02-pick')!;
    // Two votes: the first in two waves, the second decided in its first wave.
    expect(pick).toMatchObject({ runs: 2, handoffs: 0 });
    expect(pick.samples).toBeGreaterThanOrEqual(8);
    for (const s of stats.steps) {
      expect(Number.isFinite(s.meanDurationMs), s.step).toBe(true);
      expect(Number.isFinite(s.maxDurationMs), s.step).toBe(true);
    }
    // The run's own usage (what `stepwise run` reports) is the sum of the steps': nothing counted twice.
    expect(stats.steps.reduce((n, s) => n + s.modelCalls, 0)).toBe(usage);
  });
});
