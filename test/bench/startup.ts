/**
 * CLI startup as a user pays it: this repository packed, installed into a project made by
 * `stepwise new` (its dependencies from the registry), and each command timed as a whole fresh
 * process, several times, interleaved with a bare `node` start so machine noise falls on all alike.
 * The commands run on a Node.js the package supports (`engines`: 22 or later): the machine's own when it is one, else
 * Node 22 from the npm registry (as `.ci/node-smoke` takes it). The second run is also timed on the machine's own
 * Node, for comparison.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { OLDEST_NODE } from '../../src/cli/node-version.ts';
import { PROJECT_ROOT } from '../../src/core/paths.ts';
import type { BenchRun } from './harness.ts';

const ROUNDS = Number(process.env.BENCH_STARTUP_ROUNDS ?? 7);
const env = {
  PATH: process.env.PATH!,
  HOME: process.env.HOME!,
  AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
  // A service of the bench's own, stopped at the end (not the user's).
  STEPWISE_LOCAL_SERVICE_DIR: mkdtempSync(join(tmpdir(), 'stepwise-bench-service-')),
};

/** A node binary the package supports: this one, or the oldest supported from the registry (fetched once by npx). */
function supportedNode(): string {
  if (Number(process.versions.node.split('.')[0]) >= OLDEST_NODE) return process.execPath;
  return execFileSync('npx', ['--yes', '--package', `node@${OLDEST_NODE}`, '--', 'node', '-p', 'process.execPath'], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    env,
  }).trim();
}

/** A project made by the packed package's `stepwise new`, with the tarball installed. */
function installedProject(work: string): string {
  execFileSync('npm', ['pack', '--pack-destination', work, '--silent'], {
    cwd: PROJECT_ROOT,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const tarball = join(work, readdirSync(work).find((f) => f.endsWith('.tgz'))!);
  execFileSync('npx', ['--yes', '--package', tarball, 'stepwise', 'new', 'startup', '--stepwise', `file:${tarball}`], {
    cwd: work,
    stdio: ['ignore', 'ignore', 'inherit'],
    env,
  });
  const project = join(work, 'startup');
  execFileSync('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error'], {
    cwd: project,
    stdio: ['ignore', 'ignore', 'inherit'],
    env,
  });
  return project;
}

/** Wall seconds of one fresh process (`[node, ...args]`). @throws when it fails. */
function seconds(cwd: string, [node, ...args]: readonly string[]): number {
  const start = performance.now();
  const ran = spawnSync(node!, args, { cwd, env, encoding: 'utf8' });
  const elapsed = (performance.now() - start) / 1000;
  if (ran.status !== 0) throw new Error(`node ${args.join(' ')} exited ${ran.status}: ${ran.stderr.split('\n')[0]}`);
  return elapsed;
}

export async function startup(bench: BenchRun): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), 'stepwise-bench-startup-'));
  try {
    const project = installedProject(work);
    const node = supportedNode();
    const nodeVersion = execFileSync(node, ['--version'], { encoding: 'utf8' }).trim();
    const bin = join(project, 'node_modules', 'stepwise', 'bin', 'stepwise.mjs');
    const sample = ['run', 'support-desk', '--input', 'statemachines/support-desk/samples/billing-question.json'];
    const commands = {
      node: [node, '-e', '0'],
      version: [node, bin, '--version'],
      help: [node, bin, '--help'],
      synth: [node, bin, 'synth', 'support-desk'],
      synthCold: [node, bin, 'synth', 'support-desk'],
      secondRun: [node, bin, ...sample],
      secondRunMachineNode: [process.execPath, bin, ...sample],
    } as const;
    const samples: Record<keyof typeof commands, number[]> = {
      node: [],
      version: [],
      help: [],
      synth: [],
      synthCold: [],
      secondRun: [],
      secondRunMachineNode: [],
    };
    // The first run starts the warm local service (and caches the synth): what the second run finds.
    const firstRun = seconds(project, commands.secondRun);
    for (let round = 0; round < ROUNDS; round++)
      for (const [name, args] of Object.entries(commands)) {
        // Cold: as after a change to the project, with neither the synth cache nor the bundled project modules.
        if (name === 'synthCold') rmSync(join(project, '.stepwise'), { recursive: true, force: true });
        samples[name as keyof typeof commands].push(seconds(project, args));
      }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const what = {
      node: 'node -e 0: a bare Node.js start, for scale',
      version: 'stepwise --version from the installed package, a fresh process',
      help: 'stepwise --help from the installed package, a fresh process',
      synth:
        'stepwise synth support-desk from the installed package, nothing changed since the previous run (its synth cache)',
      synthCold:
        'stepwise synth support-desk from the installed package after a change: bundle the project modules, build and synthesize its stack, print the ASL',
      secondRun:
        'stepwise run support-desk <sample> from the installed package, a fresh process, with the warm local service up (a second run)',
      secondRunMachineNode: `the second run on this machine's own Node.js (${process.version}), for comparison`,
    };
    for (const name of Object.keys(commands) as (keyof typeof commands)[])
      bench.samples({
        name: `startup.${name}`,
        description: what[name],
        warmupIterations: 0,
        samples: samples[name].map((s) => s * 1000),
        unit: 'runs',
      });
    bench.figures.startup = {
      ...Object.fromEntries(
        Object.entries(samples).map(([k, v]) => [
          k,
          { medianSeconds: Math.round(median(v) * 1000) / 1000, rounds: ROUNDS },
        ]),
      ),
      firstRun: { seconds: Math.round(firstRun * 1000) / 1000, note: 'starts the warm local service' },
      node: { timedOn: nodeVersion, machine: process.version },
    };
    bench.target(
      'local.secondRunSeconds',
      `a second stepwise run of a sample from the installed package in a fresh process (the warm local service up) on Node.js ${nodeVersion}, median seconds`,
      median(samples.secondRun),
      { max: 1.5 },
    );
    bench.target(
      'startup.helpSeconds',
      'stepwise --help from the installed package in a fresh process, median seconds',
      median(samples.help),
      { max: 0.3 },
    );
    bench.target(
      'startup.synthSeconds',
      'stepwise synth <workflow> from the installed package in a fresh process, nothing changed since the previous run, median seconds',
      median(samples.synth),
      { max: 1 },
    );
  } finally {
    spawnSync(
      process.execPath,
      [join(work, 'startup', 'node_modules', 'stepwise', 'bin', 'stepwise.mjs'), 'local', 'stop'],
      {
        cwd: work,
        env,
      },
    );
    rmSync(work, { recursive: true, force: true });
  }
}
