/**
 * Load through the local runtime: many warranty emails delivered concurrently to one
 * WorkflowSession (real ingress, synthesized ASL, handlers, DynamoDB Local, offline model), every
 * one accounted for (a defined status and its event-log entry), with throughput and latency
 * percentiles; and lead events put on the leads bus of one LifecycleSession at once, every lead's
 * final state equal to a sequential replay of its log. Used by test/reliability/load.int.test.ts
 * and, for larger runs, by `npm run load -- --emails 2000 [--concurrency 200] [--lead-events 5000]`.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Command, InvalidArgumentError } from 'commander';
import { STATEMACHINES_DIR } from '../../src/core/paths.ts';
import type { AgentConfig } from '../../src/definitions/lifecycle/agent-config.ts';
import { loadAgentConfig, loadLifecycle } from '../../src/definitions/lifecycle/loader.ts';
import type { LifecycleEvent, LoggedEvent } from '../../src/definitions/lifecycle/schema.ts';
import { LifecycleSession } from '../../src/local/sessions/lifecycle-session.ts';
import { type RunResult, WorkflowSession } from '../../src/local/sessions/workflow-session.ts';
import { applyEvent, initialSnapshot } from '../../src/runtime/lifecycle/transition.ts';

const SAMPLES = join(STATEMACHINES_DIR, 'warranty-email/samples');

/**
 * `count` distinct mails: the warranty samples in turn, each under its own Message-ID (a new mail, not a redelivery).
 */
export function loadEmails(count: number): { file: string; raw: string }[] {
  const samples = readdirSync(SAMPLES)
    .filter((f) => f.endsWith('.eml'))
    .sort()
    .map((f) => ({ file: f, raw: readFileSync(join(SAMPLES, f), 'utf8') }));
  return Array.from({ length: count }, (_, i) => {
    const { file, raw } = samples[i % samples.length]!;
    return { file: `${i}-${file}`, raw: raw.replace(/^Message-ID: .*$/im, `Message-ID: <load-${i}@example.org>`) };
  });
}

/** The value below which `p` percent of the sorted `values` fall (nearest rank). */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

export interface LoadReport {
  emails: number;
  /** Status → count. */
  statuses: Record<string, number>;
  /** Emails without a defined outcome: FAILED, or no event-log entry matching the status. */
  unaccounted: string[];
  wallMs: number;
  perSecond: number;
  p50Ms: number;
  p95Ms: number;
  p99Ms: number;
}

/** Deliver `count` emails, at most `concurrency` at a time, and account for every one. */
export async function runEmailLoad(
  session: WorkflowSession,
  count: number,
  concurrency: number = count,
): Promise<LoadReport> {
  const emails = loadEmails(count);
  const latencies: number[] = [];
  const results: RunResult[] = new Array(count);
  let next = 0;
  const started = performance.now();
  const worker = async () => {
    for (let i = next++; i < count; i = next++) {
      const t0 = performance.now();
      results[i] = await session.deliverEmail(emails[i]!.raw, emails[i]!.file);
      latencies.push(performance.now() - t0);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
  const wallMs = performance.now() - started;
  const statuses: Record<string, number> = {};
  const unaccounted: string[] = [];
  for (const result of results) {
    statuses[result.status] = (statuses[result.status] ?? 0) + 1;
    const events = result.executionName ? await session.events(result.executionName) : [];
    const logged = result.status === 'REJECTED' ? 'IngressRejected' : 'StepCompleted';
    if (!['SUCCEEDED', 'REJECTED'].includes(result.status) || !events.some((e) => e.type === logged))
      unaccounted.push(`${result.file}: ${result.status}${result.reason ? ` (${result.reason})` : ''}`);
  }
  latencies.sort((a, b) => a - b);
  return {
    emails: count,
    statuses,
    unaccounted,
    wallMs: Math.round(wallMs),
    perSecond: Math.round((count / wallMs) * 1000 * 10) / 10,
    p50Ms: Math.round(percentile(latencies, 50)),
    p95Ms: Math.round(percentile(latencies, 95)),
    p99Ms: Math.round(percentile(latencies, 99)),
  };
}

/** One line: `300 emails, 0 unaccounted (SUCCEEDED 258, REJECTED 42), 12.3/s, p50 …`. */
export function formatLoad(r: LoadReport): string {
  const statuses = Object.entries(r.statuses)
    .map(([s, n]) => `${s} ${n}`)
    .join(', ');
  return `${r.emails} emails, ${r.unaccounted.length} unaccounted (${statuses}), ${r.perSecond}/s, p50 ${r.p50Ms} ms, p95 ${r.p95Ms} ms, p99 ${r.p99Ms} ms`;
}

export interface LeadLoadReport {
  events: number;
  leads: number;
  /** Events not in their lead's log, or a lead whose state differs from the sequential replay of its log. */
  unaccounted: string[];
  failedExecutions: number;
  deadLetters: number;
  wallMs: number;
  perSecond: number;
  p50Ms: number;
  p95Ms: number;
  p99Ms: number;
}

/** `count` lead events over `leads` leads, types in a fixed rotation (some refused in most states: those must be logged too). */
export function leadEvents(
  count: number,
  leads: number,
  t0: number = Date.parse('2026-11-21T09:00:00Z'),
): LifecycleEvent[] {
  const types = loadLifecycle('lead-lifecycle').events.filter((t) => t !== 'crm.state_set');
  return Array.from({ length: count }, (_, i) => ({
    id: `load-${i}`,
    entityId: `lead-${i % leads}`,
    type: types[(i * 7 + Math.floor(i / leads)) % types.length]!,
    time: new Date(t0 + Math.floor(i / leads) * 1000).toISOString(),
  }));
}

const isRaised = (e: LoggedEvent) =>
  e.detail?.triggeredBy !== undefined && e.id === `${String(e.detail.triggeredBy)}:${e.type}`;

/**
 * Put the events on the bus `concurrency` at a time (each wave delivered concurrently, as EventBridge
 * would), wait for every delivery, and check each lead against a sequential replay of its log.
 * @param config the agent config the session applies (the replay needs the same)
 */
export async function runLeadLoad(
  session: LifecycleSession,
  events: readonly LifecycleEvent[],
  config: AgentConfig,
  concurrency = 100,
): Promise<LeadLoadReport> {
  const before = session.executions.length;
  const started = performance.now();
  for (let i = 0; i < events.length; i += concurrency) {
    await session.put(events.slice(i, i + concurrency));
    await session.drain();
  }
  const wallMs = performance.now() - started;
  const executions = session.executions.slice(before);
  const durations = executions
    .map((e) => (e.stopDate?.getTime() ?? e.startDate.getTime()) - e.startDate.getTime())
    .sort((a, b) => a - b);
  const unaccounted: string[] = [];
  const byLead = new Map<string, Set<string>>();
  for (const e of events) (byLead.get(e.entityId) ?? byLead.set(e.entityId, new Set()).get(e.entityId)!).add(e.id);
  const def = session.definition;
  for (const [entityId, sent] of byLead) {
    const snapshot = await session.store.getEntity(entityId);
    const log = await session.store.listEvents(entityId);
    const triggers = log.filter((e) => !isRaised(e));
    const logged = new Set(triggers.map((e) => e.id));
    for (const id of sent) if (!logged.has(id)) unaccounted.push(`${entityId}: event ${id} not in the log`);
    if (triggers.length !== logged.size) unaccounted.push(`${entityId}: an event logged twice`);
    let replayed = initialSnapshot(def);
    for (const { id, type, time, detail } of triggers)
      replayed = applyEvent(def, replayed, { id, entityId, type, time, ...(detail && { detail }) }, config).snapshot;
    if (JSON.stringify(replayed) !== JSON.stringify(snapshot))
      unaccounted.push(`${entityId}: the final state differs from a sequential replay of its log`);
  }
  for (const failed of executions.filter((e) => e.status !== 'SUCCEEDED').slice(0, 5))
    unaccounted.push(
      `execution ${failed.name}: ${failed.error?.Error ?? failed.status}: ${failed.error?.Cause?.slice(0, 200) ?? ''}`,
    );
  return {
    events: events.length,
    leads: byLead.size,
    unaccounted,
    failedExecutions: executions.filter((e) => e.status !== 'SUCCEEDED').length,
    deadLetters: session.sentDeadLetters.length + session.listenerDeadLetters.length,
    wallMs: Math.round(wallMs),
    perSecond: Math.round((events.length / wallMs) * 1000 * 10) / 10,
    p50Ms: Math.round(percentile(durations, 50)),
    p95Ms: Math.round(percentile(durations, 95)),
    p99Ms: Math.round(percentile(durations, 99)),
  };
}

export function formatLeadLoad(r: LeadLoadReport): string {
  return `${r.events} events for ${r.leads} leads, ${r.unaccounted.length} unaccounted, ${r.failedExecutions} failed executions, ${r.deadLetters} dead letters, ${r.perSecond}/s, execution p50 ${r.p50Ms} ms, p95 ${r.p95Ms} ms, p99 ${r.p99Ms} ms`;
}

const positive = (value: string) => {
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new InvalidArgumentError('a positive integer');
  return n;
};

async function main(argv: string[]): Promise<number> {
  const opts = new Command('load')
    .description(
      'Deliver many warranty emails concurrently through one local session and print throughput and latency.',
    )
    .option('--emails <n>', 'how many emails', positive, 2000)
    .option('--concurrency <n>', 'deliveries in flight at once', positive, 200)
    .option(
      '--lead-events <n>',
      'lead events put on the leads bus at once (0: none)',
      (v) => (v === '0' ? 0 : positive(v)),
      0,
    )
    .option('--leads <n>', 'leads the lead events are spread over', positive, 100)
    .parse(argv, { from: 'user' })
    .opts<{ emails: number; concurrency: number; leadEvents: number; leads: number }>();
  let failed = 0;
  const session = await WorkflowSession.start({ workflow: 'warranty-email', historyDir: false, logLevel: 'SILENT' });
  try {
    const report = await runEmailLoad(session, opts.emails, opts.concurrency);
    console.log(`load (emails): ${formatLoad(report)}`);
    for (const line of report.unaccounted.slice(0, 20)) console.log(`  unaccounted: ${line}`);
    failed += report.unaccounted.length;
  } finally {
    await session.close();
  }
  if (opts.leadEvents > 0) {
    const agentConfig = loadAgentConfig('attend-meeting', 'lead-lifecycle');
    const leads = await LifecycleSession.start({ lifecycle: 'lead-lifecycle', agentConfig });
    try {
      const report = await runLeadLoad(leads, leadEvents(opts.leadEvents, opts.leads), agentConfig, opts.concurrency);
      console.log(`load (lead events): ${formatLeadLoad(report)}`);
      for (const line of report.unaccounted.slice(0, 20)) console.log(`  unaccounted: ${line}`);
      failed += report.unaccounted.length + report.failedExecutions;
    } finally {
      await leads.stop();
    }
  }
  return failed ? 1 : 0;
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href)
  process.exitCode = await main(process.argv.slice(2));
