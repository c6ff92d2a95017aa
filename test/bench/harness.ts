/**
 * The benchmark harness: timed cases, their statistics and memory deltas, the table printed at the
 * end and `.stepwise/bench/results.json`.
 *
 * Repeated cases run on tinybench (the copy vitest ships) with a fixed iteration count: no time
 * budget, so every run measures the same work and two runs compare. One-shot cases (a cold synth,
 * a session start) are timed directly: they cannot be repeated without changing what they measure.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { arch, availableParallelism, cpus, platform } from 'node:os';
import { dirname } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Bench } from 'tinybench';

/** What one case measured. Times are per iteration; `opsPerSec` counts `opsPerIteration` per iteration. */
export interface CaseResult {
  name: string;
  description: string;
  iterations: number;
  warmupIterations: number;
  /** What one iteration does, e.g. 28 events: `opsPerSec` is in these units. */
  opsPerIteration: number;
  unit: string;
  meanMs: number;
  p50Ms: number;
  p95Ms: number;
  minMs: number;
  maxMs: number;
  opsPerSec: number;
  /** RSS after the timed iterations minus before them (after warm-up and a forced GC). */
  rssDeltaBytes: number;
  /** Heap still used after a forced GC once the iterations are done, minus before them: what the case retained. */
  heapUsedDeltaBytes: number;
}

/** A case that threw: reported, and the run exits non-zero, but the other cases still run. */
export interface CaseFailure {
  name: string;
  error: string;
}

export interface RepeatedCase {
  name: string;
  description: string;
  iterations: number;
  warmupIterations: number;
  /** @default 1 */
  opsPerIteration?: number;
  /** @default 'ops' */
  unit?: string;
  /**
   * One iteration. Declare async work with `async` so tinybench recognises it without a probe
   * call (it calls any other function once, untimed, to see whether it returns a promise).
   */
  fn: () => unknown;
}

export interface OneShotCase<T> {
  name: string;
  description: string;
  /** @default 1 */
  opsPerIteration?: number;
  /** @default 'ops' */
  unit?: string;
  fn: () => T | Promise<T>;
}

/** Without `--expose-gc` (see the `bench` script) heap deltas include garbage not yet collected. */
export const gcExposed = typeof globalThis.gc === 'function';

function collectGarbage(): void {
  // Twice: the first pass can leave objects only the second finds unreachable (weak refs, finalizers).
  globalThis.gc?.();
  globalThis.gc?.();
}

interface MemoryMark {
  rss: number;
  heapUsed: number;
}

function markMemory(): MemoryMark {
  collectGarbage();
  const { rss, heapUsed } = process.memoryUsage();
  return { rss, heapUsed };
}

function memoryDelta(before: MemoryMark): Pick<CaseResult, 'rssDeltaBytes' | 'heapUsedDeltaBytes'> {
  // RSS first: a collection does not shrink it right away, and it is growth during the run we want.
  const { rss } = process.memoryUsage();
  collectGarbage();
  return { rssDeltaBytes: rss - before.rss, heapUsedDeltaBytes: process.memoryUsage().heapUsed - before.heapUsed };
}

/** Nearest-rank percentile of sorted samples (the rule tinybench uses for its own p75/p99). */
function percentile(sorted: readonly number[], q: number): number {
  return sorted[Math.max(0, Math.ceil(sorted.length * q) - 1)]!;
}

function summarize(samples: readonly number[], opsPerIteration: number) {
  const sorted = [...samples].sort((a, b) => a - b);
  const meanMs = sorted.reduce((sum, s) => sum + s, 0) / sorted.length;
  return {
    meanMs,
    p50Ms: percentile(sorted, 0.5),
    p95Ms: percentile(sorted, 0.95),
    minMs: sorted[0]!,
    maxMs: sorted.at(-1)!,
    opsPerSec: (opsPerIteration * 1000) / meanMs,
  };
}

/** A target of the issue the bench checks: `holds` when `value` is within `limit` (`at most` or `at least`). */
export interface Target {
  /** `null`: not measured by this bench (the description says why); then it does not hold. */
  value: number | null;
  limit: number;
  holds: boolean;
  /** How `value` compares with `limit` to hold. */
  when: 'value <= limit' | 'value >= limit';
  description: string;
}

/** Collects case results as they finish and reports them. */
export class BenchRun {
  readonly results: CaseResult[] = [];
  readonly failures: CaseFailure[] = [];
  /** Figures that are not timings (model calls, ratios, costs), by group. */
  readonly figures: Record<string, unknown> = {};
  readonly targets: Record<string, Target> = {};
  private readonly startedAt = new Date();

  /** Warm up, then time exactly `iterations` calls of `fn`. */
  async repeated(c: RepeatedCase): Promise<CaseResult | undefined> {
    return this.record(c.name, async () => {
      // time: 0 makes the iteration counts the only stopping rule.
      const bench = new Bench({
        now: () => performance.now(),
        time: 0,
        iterations: c.iterations,
        warmupTime: 0,
        warmupIterations: c.warmupIterations,
        throws: true,
      });
      bench.add(c.name, c.fn);
      await bench.warmup();
      const before = markMemory();
      const [task] = await bench.run();
      const memory = memoryDelta(before);
      const samples = task!.result!.samples;
      if (samples.length !== c.iterations)
        throw new Error(`tinybench ran ${samples.length} iterations, expected ${c.iterations}`);
      const opsPerIteration = c.opsPerIteration ?? 1;
      return {
        name: c.name,
        description: c.description,
        iterations: samples.length,
        warmupIterations: c.warmupIterations,
        opsPerIteration,
        unit: c.unit ?? 'ops',
        ...summarize(samples, opsPerIteration),
        ...memory,
      };
    });
  }

  /** Time one call of `fn` (no warm-up: the first call is the point) and hand back its value. */
  async once<T>(c: OneShotCase<T>): Promise<T | undefined> {
    let value: T | undefined;
    await this.record(c.name, async () => {
      const before = markMemory();
      const start = performance.now();
      value = await c.fn();
      const ms = performance.now() - start;
      const opsPerIteration = c.opsPerIteration ?? 1;
      return {
        name: c.name,
        description: c.description,
        iterations: 1,
        warmupIterations: 0,
        opsPerIteration,
        unit: c.unit ?? 'ops',
        ...summarize([ms], opsPerIteration),
        ...memoryDelta(before),
      };
    });
    return value;
  }

  /**
   * Record samples timed outside tinybench, e.g. variants interleaved per input so that machine
   * noise falls on all of them alike.
   */
  samples(c: Omit<RepeatedCase, 'fn' | 'iterations'> & { samples: readonly number[] }): CaseResult {
    const opsPerIteration = c.opsPerIteration ?? 1;
    const result: CaseResult = {
      name: c.name,
      description: c.description,
      iterations: c.samples.length,
      warmupIterations: c.warmupIterations,
      opsPerIteration,
      unit: c.unit ?? 'ops',
      ...summarize(c.samples, opsPerIteration),
      rssDeltaBytes: 0,
      heapUsedDeltaBytes: 0,
    };
    this.results.push(result);
    process.stderr.write(`  ✓ ${c.name} (${result.iterations} × ${formatMs(result.meanMs)} ms)\n`);
    return result;
  }

  /** Check a target: at most (`max`) or at least (`min`) `limit`; a `null` value (not measured) never holds. */
  target(name: string, description: string, value: number | null, bound: { max: number } | { min: number }): Target {
    const t: Target =
      'max' in bound
        ? { value, limit: bound.max, holds: value !== null && value <= bound.max, when: 'value <= limit', description }
        : { value, limit: bound.min, holds: value !== null && value >= bound.min, when: 'value >= limit', description };
    this.targets[name] = t;
    return t;
  }

  /** Record a failure that happened outside a case (a session that would not start). */
  fail(name: string, error: unknown): void {
    const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    this.failures.push({ name, error: message });
    process.stderr.write(`  ✗ ${name}: ${message}\n`);
  }

  private async record(name: string, measure: () => Promise<CaseResult>): Promise<CaseResult | undefined> {
    try {
      const result = await measure();
      this.results.push(result);
      process.stderr.write(`  ✓ ${name} (${result.iterations} × ${formatMs(result.meanMs)} ms)\n`);
      return result;
    } catch (e) {
      this.fail(name, e);
      return undefined;
    }
  }

  /** The results as a fixed-width table. */
  table(): string {
    const header = ['case', 'iters', 'mean ms', 'p50 ms', 'p95 ms', 'throughput', 'ΔRSS MB', 'Δheap MB'];
    const rows = this.results.map((r) => [
      r.name,
      String(r.iterations),
      formatMs(r.meanMs),
      formatMs(r.p50Ms),
      formatMs(r.p95Ms),
      `${formatRate(r.opsPerSec)} ${r.unit}/s`,
      formatMb(r.rssDeltaBytes),
      formatMb(r.heapUsedDeltaBytes),
    ]);
    const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
    // Names and units read left-aligned, numbers right-aligned.
    const leftAligned = new Set([0]);
    const line = (cells: string[]) =>
      cells.map((cell, i) => (leftAligned.has(i) ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  ');
    return [line(header), widths.map((w) => '─'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
  }

  /** Write every result, with what they were measured on, as JSON. */
  writeJson(file: string, filter: readonly string[]): Record<string, unknown> {
    const document = {
      startedAt: this.startedAt.toISOString(),
      finishedAt: new Date().toISOString(),
      environment: {
        node: process.version,
        platform: `${platform()}-${arch()}`,
        cpu: cpus()[0]?.model ?? 'unknown',
        cpus: availableParallelism(),
        gcExposed,
        commit: gitCommit(),
      },
      ...(filter.length > 0 && { filter }),
      units: {
        times: 'milliseconds per iteration',
        opsPerSec: 'opsPerIteration units per second, from the mean',
        rssDeltaBytes: 'RSS after the timed iterations minus before them (after warm-up and a forced GC)',
        heapUsedDeltaBytes: 'heap used after a forced GC at the end minus at the start (retained)',
      },
      targets: this.targets,
      figures: this.figures,
      results: this.results,
      failures: this.failures,
    };
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, `${JSON.stringify(document, null, 2)}\n`);
    return document;
  }
}

/** The commit measured, with `-dirty` for uncommitted changes; `null` outside a git checkout. */
function gitCommit(): string | null {
  try {
    const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
    const dirty =
      execFileSync('git', ['status', '--porcelain'], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
      }).trim() !== '';
    return dirty ? `${commit}-dirty` : commit;
  } catch {
    return null;
  }
}

export function formatMs(ms: number): string {
  if (ms >= 100) return ms.toFixed(0);
  if (ms >= 1) return ms.toFixed(2);
  return ms.toFixed(4);
}

function formatRate(perSec: number): string {
  if (perSec >= 1e6) return `${(perSec / 1e6).toFixed(2)}M`;
  if (perSec >= 1e4) return `${(perSec / 1e3).toFixed(1)}k`;
  if (perSec >= 100) return perSec.toFixed(0);
  return perSec.toFixed(2);
}

function formatMb(bytes: number): string {
  return (bytes / 2 ** 20).toFixed(1);
}
