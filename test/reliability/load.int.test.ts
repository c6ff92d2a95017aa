/**
 * A few hundred warranty emails concurrently through one local session: every one accounted for
 * (a defined status and its event-log entry), one reply per accepted mail, and the throughput and
 * latency percentiles recorded as figures (never asserted: timing depends on the machine).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { WorkflowSession } from '../../infra/local/workflow-session.ts';
import { readOutbox } from '../../lambdas/triggers/email/mail.ts';
import { recordFigure } from './figures.ts';
import { formatLoad, loadEmails, percentile, runEmailLoad } from './load.ts';

describe('load helpers', () => {
  it('makes distinct mails and nearest-rank percentiles', () => {
    const mails = loadEmails(20);
    expect(new Set(mails.map((m) => /^Message-ID: (.*)$/im.exec(m.raw)![1])).size).toBe(20);
    const values = Array.from({ length: 100 }, (_, i) => i + 1);
    expect([percentile(values, 50), percentile(values, 95), percentile(values, 99), percentile([], 50)]).toEqual([50, 95, 99, 0]);
  });
});

describe('load', () => {
  let session: WorkflowSession | undefined;
  afterAll(() => session?.close());

  it('accounts for every one of 240 emails delivered concurrently', { timeout: 600_000 }, async () => {
    session = await WorkflowSession.start({ workflow: 'warranty-email', historyDir: false, logLevel: 'SILENT' });
    const report = await runEmailLoad(session, 240);
    recordFigure('load (emails)', formatLoad(report));
    expect(report.unaccounted).toEqual([]);
    expect(report.statuses.SUCCEEDED! + (report.statuses.REJECTED ?? 0)).toBe(240);
    // One reply per execution that ran, never two.
    const executions = readOutbox(session.outboxFile).map((m) => m.execution);
    expect(new Set(executions).size).toBe(executions.length);
  });
});
