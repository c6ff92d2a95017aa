/**
 * `npm run test:reliability`: clears the figures of an earlier run, runs the reliability and
 * security tests alone (RELIABILITY_TESTS), then prints one line per guarantee with the figure the
 * tests recorded (test/reliability/figures.ts). Exits with vitest's status, or 1 when a headline
 * figure is missing (a test that should have measured it did not run to the end).
 *
 * Extra arguments are passed to vitest (`npm run test:reliability -- -t corpus`).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import * as z from 'zod';
import { PROJECT_ROOT } from '../../src/core/paths.ts';
import { FIGURES_FILE } from './figures.ts';

/**
 * The tests behind docs/guarantees.md: everything under test/reliability (fault injection, corpus
 * runs, state size, history bound, load, security baseline, sender policy, concurrent resumes), the
 * corpus ingress test, bound and refused tool arguments, least privilege, step outputs, EventBridge
 * conformance, the 256 KiB limit, ingest and the MIME budget, the output guard, the safety
 * end-to-end tests, the lifecycle properties and the alarms of the workflow stacks.
 */
export const RELIABILITY_TESTS = [
  'test/reliability/',
  'test/corpus/',
  'test/runtime/tools/binding.int.test.ts',
  'test/cdk/least-privilege.test.ts',
  'test/runtime/steps/step-output.test.ts',
  'test/runtime/steps/step-toolbox.test.ts',
  'test/local/cloud/eventbridge/pattern.test.ts',
  'test/local/asl/limits.int.test.ts',
  'test/runtime/triggers/email/ingest.test.ts',
  'test/runtime/triggers/email/mime-budget.test.ts',
  'test/runtime/steps/guard-rules.test.ts',
  'test/runtime/steps/guard-quoting.test.ts',
  'test/examples/warranty-email/reply-guard.test.ts',
  'test/examples/warranty-email/safety.int.test.ts',
  'test/local/sessions/lifecycle/properties.int.test.ts',
  'test/cdk/operations.test.ts',
] as const;

/** Figures every full run must print. */
export const HEADLINE_FIGURES = [
  'injection',
  'hostile-model',
  'hostile replies quoting the sender',
  'concurrent resumes',
  'oversize lead events',
  'judge without a verdict',
  'single-prompt rollback',
  'hung model endpoint',
  'bad recordings',
  'definition parse',
] as const;

const Figure = z.object({ guarantee: z.string().min(1), figure: z.string() });

/** The recorded figures, in the order recorded; a guarantee recorded twice keeps its last figure. */
export function readFigures(file: string = FIGURES_FILE): Map<string, string> {
  const figures = new Map<string, string>();
  if (!existsSync(file)) return figures;
  for (const line of readFileSync(file, 'utf8').split('\n').filter(Boolean)) {
    const { guarantee, figure } = Figure.parse(JSON.parse(line));
    figures.delete(guarantee);
    figures.set(guarantee, figure);
  }
  return figures;
}

/** One line per guarantee (`injection: 0/116 escaped`), and the headline figures that are missing. */
export function formatReport(
  figures: Map<string, string>,
  headline: readonly string[] = HEADLINE_FIGURES,
): { lines: string[]; missing: string[] } {
  const missing = headline.filter((g) => !figures.has(g));
  const lines = [...figures].map(([guarantee, figure]) => `${guarantee}: ${figure}`);
  return { lines: [...lines, ...missing.map((g) => `${g}: not measured`)], missing };
}

function main(args: string[]): number {
  rmSync(FIGURES_FILE, { force: true });
  const run = spawnSync(process.execPath, ['node_modules/vitest/vitest.mjs', 'run', ...RELIABILITY_TESTS, ...args], {
    cwd: PROJECT_ROOT,
    stdio: 'inherit',
  });
  const { lines, missing } = formatReport(readFigures());
  console.log(['', 'Reliability figures (docs/guarantees.md):', ...lines.map((l) => `  ${l}`)].join('\n'));
  // A filtered run (`-- -t ...`) measures only part: then a missing headline figure is expected.
  return run.status !== 0 ? (run.status ?? 1) : missing.length && args.length === 0 ? 1 : 0;
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href)
  process.exitCode = main(process.argv.slice(2));
