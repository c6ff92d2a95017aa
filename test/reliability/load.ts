/**
 * Load through the local runtime: many warranty emails delivered concurrently to one
 * WorkflowSession (real ingress, synthesized ASL, handlers, DynamoDB Local, offline model), every
 * one accounted for (a defined status and its event-log entry), with throughput and latency
 * percentiles. Used by test/reliability/load.int.test.ts and, for larger runs, by
 * `npm run load -- --emails 2000 [--concurrency 200]`.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Command, InvalidArgumentError } from 'commander';
import { WorkflowSession, type RunResult } from '../../infra/local/workflow-session.ts';
import { STATEMACHINES_DIR } from '../../lambdas/lib/workflow/loader.ts';

const SAMPLES = join(STATEMACHINES_DIR, 'warranty-email/samples');

/** `count` distinct mails: the warranty samples in turn, each under its own Message-ID (a new mail, not a redelivery). */
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
export async function runEmailLoad(session: WorkflowSession, count: number, concurrency: number = count): Promise<LoadReport> {
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
  const statuses = Object.entries(r.statuses).map(([s, n]) => `${s} ${n}`).join(', ');
  return `${r.emails} emails, ${r.unaccounted.length} unaccounted (${statuses}), ${r.perSecond}/s, p50 ${r.p50Ms} ms, p95 ${r.p95Ms} ms, p99 ${r.p99Ms} ms`;
}

const positive = (value: string) => {
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new InvalidArgumentError('a positive integer');
  return n;
};

async function main(argv: string[]): Promise<number> {
  const opts = new Command('load')
    .description('Deliver many warranty emails concurrently through one local session and print throughput and latency.')
    .option('--emails <n>', 'how many emails', positive, 2000)
    .option('--concurrency <n>', 'deliveries in flight at once', positive, 200)
    .parse(argv, { from: 'user' })
    .opts<{ emails: number; concurrency: number }>();
  const session = await WorkflowSession.start({ workflow: 'warranty-email', historyDir: false, logLevel: 'SILENT' });
  try {
    const report = await runEmailLoad(session, opts.emails, opts.concurrency);
    console.log(`load: ${formatLoad(report)}`);
    for (const line of report.unaccounted.slice(0, 20)) console.log(`  unaccounted: ${line}`);
    return report.unaccounted.length ? 1 : 0;
  } finally {
    await session.close();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) process.exitCode = await main(process.argv.slice(2));
