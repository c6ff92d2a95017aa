/**
 * A few hundred warranty emails concurrently through one local session: every one accounted for
 * (a defined status and its event-log entry), one reply per accepted mail; and two thousand lead
 * events put on the leads bus at once: every event logged once and every lead's final state equal
 * to a sequential replay of its log. Throughput and latency percentiles are recorded as figures
 * (never asserted: timing depends on the machine).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { loadAgentConfig } from '../../src/definitions/lifecycle/loader.ts';
import { LifecycleSession } from '../../src/local/sessions/lifecycle-session.ts';
import { WorkflowSession } from '../../src/local/sessions/workflow-session.ts';
import { readOutbox } from '../../src/runtime/triggers/email/mail.ts';
import { recordFigure } from './figures.ts';
import { formatLeadLoad, formatLoad, leadEvents, loadEmails, percentile, runEmailLoad, runLeadLoad } from './load.ts';

describe('load helpers', () => {
  it('makes distinct mails and nearest-rank percentiles', () => {
    const mails = loadEmails(20);
    expect(new Set(mails.map((m) => /^Message-ID: (.*)$/im.exec(m.raw)![1])).size).toBe(20);
    const values = Array.from({ length: 100 }, (_, i) => i + 1);
    expect([percentile(values, 50), percentile(values, 95), percentile(values, 99), percentile([], 50)]).toEqual([
      50, 95, 99, 0,
    ]);
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

describe('lead load', () => {
  let session: LifecycleSession | undefined;
  afterAll(() => session?.stop());

  it('spreads events over leads in time order', () => {
    const events = leadEvents(6, 3);
    expect(events.map((e) => e.entityId)).toEqual(['lead-0', 'lead-1', 'lead-2', 'lead-0', 'lead-1', 'lead-2']);
    expect(events[3]!.time > events[0]!.time).toBe(true);
  });

  it('applies 2,000 lead events put 100 at a time: none lost, every lead equal to a sequential replay of its log', {
    timeout: 600_000,
  }, async () => {
    const agentConfig = loadAgentConfig('attend-meeting', 'lead-lifecycle');
    session = await LifecycleSession.start({ lifecycle: 'lead-lifecycle', agentConfig });
    const report = await runLeadLoad(session, leadEvents(2000, 100), agentConfig);
    recordFigure('load (lead events)', formatLeadLoad(report));
    expect(report.unaccounted).toEqual([]);
    expect(report.failedExecutions).toBe(0);
    expect(report.leads).toBe(100);
  });
});
