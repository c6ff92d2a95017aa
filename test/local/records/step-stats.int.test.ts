/** `stepwise stats`: per-step figures over the executions a local session stored. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadWorkflow } from '../../../src/definitions/workflow/loader.ts';
import { readLocalExecutions, stepStats } from '../../../src/local/records/step-stats.ts';
import { WorkflowSession } from '../../../src/local/sessions/workflow-session.ts';

const dir = mkdtempSync(join(tmpdir(), 'stepwise-stats-'));
const samples = join(loadWorkflow('warranty-email').dir, 'samples');

describe('step statistics', () => {
  beforeAll(async () => {
    const session = await WorkflowSession.start({ workflow: 'warranty-email', logLevel: 'SILENT', historyDir: dir });
    try {
      for (const sample of ['valid-warranty', 'missing-serial', 'out-of-scope'])
        await session.deliverFile(join(samples, `${sample}.eml`));
    } finally {
      await session.close();
    }
    writeFileSync(join(dir, 'broken.json'), '{ not json');
  }, 120_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('counts runs, routes, deciders and model calls per step, most-run first', () => {
    const { records, unreadable } = readLocalExecutions('warranty-email', dir);
    expect(unreadable).toBe(1);
    const stats = stepStats(records);
    expect(stats).toMatchObject({ executions: 3, byStatus: { SUCCEEDED: 3 } });
    const of = (step: string) => stats.steps.find((s) => s.step === step)!;
    expect(stats.steps[0]!.step).toBe('01-extract-serial');
    expect(of('01-extract-serial')).toMatchObject({
      runs: 3,
      failures: 0,
      routes: { '02-check-warranty': 1, '03d-request-serial': 1, '04-out-of-scope': 1 },
      // The clear claim and the short one without a serial by the fast path, the out-of-scope mail by the model.
      decidedBy: { 'fast-path': 2, offline: 1 },
      modelCalls: 1,
    });
    expect(of('03a-valid-warranty')).toMatchObject({ runs: 1, modelCalls: 1, decidedBy: { offline: 1 } });
    expect(of('04-out-of-scope')).toMatchObject({ runs: 1, handoffs: 0 });
    expect(of('05-send-confirmation').meanDurationMs).toBeGreaterThan(0);
  });

  it('filters by workflow', () => {
    expect(readLocalExecutions('another-workflow', dir).records).toEqual([]);
  });
});

describe('step statistics of a consensus step', () => {
  const toolLoop = mkdtempSync(join(tmpdir(), 'stepwise-stats-consensus-'));
  let usage = 0;
  beforeAll(async () => {
    const session = await WorkflowSession.start({ workflow: 'tool-loop', logLevel: 'SILENT', historyDir: toolLoop });
    try {
      const result = await session.runFiles([join(loadWorkflow('tool-loop').dir, 'samples', 'convert.json')]);
      usage = result[0]!.usage!.modelCalls;
    } finally {
      await session.close();
    }
  }, 120_000);
  afterAll(() => rmSync(toolLoop, { recursive: true, force: true }));

  it('counts samples as samples of their step (not as steps or hand-offs), with no NaN and each model call once', () => {
    const stats = stepStats(readLocalExecutions('tool-loop', toolLoop).records);
    expect(stats.steps.map((s) => s.step).sort()).toEqual([
      '01-start-group',
      '02-select-tool',
      '03-execute',
      '04-reflect',
      '05-respond',
    ]);
    const select = stats.steps.find((s) => s.step === '02-select-tool')!;
    expect(select).toMatchObject({ runs: 1, handoffs: 0 });
    expect(select.samples).toBeGreaterThanOrEqual(4);
    for (const s of stats.steps) {
      expect(Number.isFinite(s.meanDurationMs), s.step).toBe(true);
      expect(Number.isFinite(s.maxDurationMs), s.step).toBe(true);
    }
    // The run's own usage (what `stepwise run` reports) is the sum of the steps': nothing counted twice.
    expect(stats.steps.reduce((n, s) => n + s.modelCalls, 0)).toBe(usage);
  });
});
