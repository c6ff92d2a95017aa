/**
 * The benchmark suite (`npm run bench`): speed and memory of the hot paths, measured here and never
 * by timed assertions in tests. Prints a table and writes `.stepwise/bench/results.json`.
 *
 *   npm run bench                          every group (about 4 minutes on 2 cores)
 *   npm run bench -- eventbridge synth     only the groups whose name contains one of the words
 *   npm run -s bench -- --json             the whole document (targets, figures, results) on stdout, progress on stderr
 *   npm run -s bench -- --markdown         the tables of docs/internals/benchmarks.md from the same run
 *   BENCH_ROUNDS=5 npm run bench -- orchestration   fewer interleaved rounds (a quick check while developing)
 *
 * Each repeated case warms up, then runs a fixed number of iterations (see harness.ts); one-shot
 * cases time what only happens once per process (a cold synth, a session start, a first email).
 * The session groups start DynamoDB Local (Java 17+) and always stop it.
 *
 * This file lists the groups, in the order they run, and reports; each group is a module of
 * groups/ (the startup and studio groups: startup.ts and studio.ts).
 */
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { STATE_DIR as STEPWISE_DIR } from '../../src/core/paths.ts';
import { bundles } from './groups/bundles.ts';
import { cost } from './groups/cost.ts';
import { eventBridge } from './groups/eventbridge.ts';
import { fanOut } from './groups/fan-out.ts';
import { ingressBudget } from './groups/ingress-budget.ts';
import { lifecycleCore } from './groups/lifecycle-core.ts';
import { lifecycleSession } from './groups/lifecycle-session.ts';
import { leadThroughput } from './groups/lifecycle-throughput.ts';
import { orchestration } from './groups/orchestration.ts';
import { studioList } from './groups/studio-list.ts';
import { synth } from './groups/synth.ts';
import { warrantySession } from './groups/warranty-session.ts';
import { workflowLoading } from './groups/workflow.ts';
import { BenchRun, gcExposed } from './harness.ts';
import { benchMarkdown } from './markdown.ts';
import { startup } from './startup.ts';
import { studioOpen } from './studio.ts';

const RESULTS_FILE = join(STEPWISE_DIR, 'bench', 'results.json');

interface Group {
  name: string;
  run: (bench: BenchRun) => Promise<void>;
}

/** In this order: the synth group must come before anything else synthesizes. */
const GROUPS: Group[] = [
  { name: 'workflow', run: workflowLoading },
  { name: 'synth', run: synth },
  { name: 'lifecycle-core', run: lifecycleCore },
  { name: 'eventbridge', run: eventBridge },
  { name: 'lifecycle-session', run: lifecycleSession },
  { name: 'lifecycle-throughput', run: leadThroughput },
  { name: 'warranty-session', run: warrantySession },
  { name: 'orchestration', run: orchestration },
  { name: 'fan-out', run: fanOut },
  { name: 'cost', run: cost },
  { name: 'bundles', run: bundles },
  { name: 'startup', run: startup },
  { name: 'ingress-budget', run: ingressBudget },
  { name: 'studio', run: studioOpen },
  { name: 'studio-list', run: studioList },
];

async function main(): Promise<number> {
  // The SDK's multi-line Node 20 warning on every client would bury the progress lines.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  const args = process.argv.slice(2);
  const json = args.includes('--json');
  const markdown = args.includes('--markdown');
  const filter = args.filter((a) => a !== '--json' && a !== '--markdown');
  const groups = filter.length ? GROUPS.filter((g) => filter.some((word) => g.name.includes(word))) : GROUPS;
  if (!groups.length) {
    process.stderr.write(
      `bench: no group matches ${filter.join(' ')} (groups: ${GROUPS.map((g) => g.name).join(', ')})\n`,
    );
    return 2;
  }
  if (!gcExposed)
    process.stderr.write(
      'bench: run with --expose-gc (npm run bench does) for heap deltas without uncollected garbage\n',
    );

  const bench = new BenchRun();
  const started = performance.now();
  for (const group of groups) {
    process.stderr.write(`${group.name}\n`);
    try {
      await group.run(bench);
    } catch (e) {
      bench.fail(group.name, e);
    }
  }
  const document = bench.writeJson(RESULTS_FILE, filter);
  if (json || markdown) {
    process.stdout.write(json ? `${JSON.stringify(document, null, 2)}\n` : benchMarkdown(document));
    return bench.failures.length ? 1 : 0;
  }

  process.stdout.write(`\n${bench.table()}\n\n`);
  for (const f of bench.failures) process.stdout.write(`FAILED ${f.name}: ${f.error}\n`);
  process.stdout.write(
    `${bench.results.length} cases in ${((performance.now() - started) / 1000).toFixed(1)} s → ${RESULTS_FILE}\n`,
  );
  return bench.failures.length ? 1 : 0;
}

process.exitCode = await main();
