/** `stepwise stats`: per-step figures over the executions a local session stored. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readLocalExecutions, stepStats } from '../../infra/local/step-stats.ts';
import { WorkflowSession } from '../../infra/local/workflow-session.ts';
import { loadWorkflow } from '../../lambdas/lib/workflow/loader.ts';

const dir = mkdtempSync(join(tmpdir(), 'stepwise-stats-'));
const samples = join(loadWorkflow('warranty-email').dir, 'samples');

describe('step statistics', () => {
  beforeAll(async () => {
    const session = await WorkflowSession.start({ workflow: 'warranty-email', logLevel: 'SILENT', historyDir: dir });
    try {
      for (const sample of ['valid-warranty', 'missing-serial', 'out-of-scope']) await session.deliverFile(join(samples, `${sample}.eml`));
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
      // The clear claim and the short one without a serial by the fast path (AC3), the out-of-scope mail by the model.
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
