/**
 * The package as built (`npm run build`), once per test run and engine source: tests that start the CLI many times
 * (the docs' commands) run the compiled CLI, 0.1 s a start instead of 2 s through tsx. Built under
 * node_modules/.cache keyed by the sources it compiles, so a run after an edit builds again and concurrent test
 * files share one build.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { join, relative } from 'node:path';
import { PACKAGE_ROOT } from '../../src/core/paths.ts';
import { copyProject } from './project-copy.ts';

const CACHE = join(PACKAGE_ROOT, 'node_modules', '.cache', 'stepwise-test-build');
const INPUTS = ['src', 'package.json', 'tsconfig.json', 'tsconfig.build.json', 'bin/build.mjs', 'bin/stepwise.mjs'];
/**
 * A build of older sources goes once no test has asked for it this long: a copy that links it (copyFixtureProject)
 * may still be running while a test file of edited sources builds again.
 */
const UNUSED_MS = 3_600_000;

/**
 * A key of everything the build reads: each file's path and content (not its modification time: `npm pack` rewrites
 * package.json and puts the same text back, and that must not cost a second build).
 */
function sourceKey(): string {
  const hash = createHash('sha256');
  const walk = (path: string) => {
    if (statSync(path).isDirectory()) for (const entry of readdirSync(path).sort()) walk(join(path, entry));
    else
      hash
        .update(`${relative(PACKAGE_ROOT, path)}\n`)
        .update(readFileSync(path))
        .update('\0');
  };
  for (const input of INPUTS) walk(join(PACKAGE_ROOT, input));
  return hash.digest('hex').slice(0, 16);
}

/** Block this thread for `ms` (the build runs synchronously in a test's hook). */
const sleepSync = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

/** Hold a directory lock (mkdir is atomic) while `fn` runs; others wait. A lock older than 10 minutes is stale. */
function withLock<T>(lock: string, fn: () => T): T {
  for (;;) {
    try {
      mkdirSync(lock, { recursive: false });
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      if (Date.now() - statSync(lock).mtimeMs > 600_000) rmSync(lock, { recursive: true, force: true });
      else sleepSync(250);
    }
  }
  try {
    return fn();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

/** Mark a build as used now (its folder's modification time). */
function used(dir: string): string {
  const now = new Date();
  utimesSync(dir, now, now);
  return dir;
}

/**
 * The folder of the built package, laid out as installed (`package.json`, `bin/stepwise.mjs`, `dist/`, the templates),
 * building it unless this source was built.
 */
export function builtPackage(): string {
  const dir = join(CACHE, sourceKey());
  if (existsSync(join(dir, 'dist'))) return used(dir);
  mkdirSync(CACHE, { recursive: true });
  return withLock(`${dir}.lock`, () => {
    if (existsSync(join(dir, 'dist'))) return used(dir);
    // Finished builds of older sources no test asked for lately go; a build in progress (its staging folder or lock)
    // is another run's.
    for (const old of readdirSync(CACHE).filter((name) => !/\.(lock|tmp-\d+)$/.test(name)))
      if (Date.now() - statSync(join(CACHE, old)).mtimeMs > UNUSED_MS)
        rmSync(join(CACHE, old), { recursive: true, force: true });
    const staging = `${dir}.tmp-${process.pid}`;
    rmSync(staging, { recursive: true, force: true });
    mkdirSync(staging, { recursive: true });
    // What the compiled CLI reads beside dist/ as an installed package has it: package.json, the templates, and the
    // command itself (`--watch` runs it again in a child).
    copyFileSync(join(PACKAGE_ROOT, 'package.json'), join(staging, 'package.json'));
    mkdirSync(join(staging, 'bin'));
    copyFileSync(join(PACKAGE_ROOT, 'bin', 'stepwise.mjs'), join(staging, 'bin', 'stepwise.mjs'));
    cpSync(join(PACKAGE_ROOT, 'src', 'cli', 'templates'), join(staging, 'src', 'cli', 'templates'), {
      recursive: true,
    });
    execFileSync(
      process.execPath,
      [join(PACKAGE_ROOT, 'bin/build.mjs'), '--out', join(staging, 'dist'), '--no-check'],
      {
        cwd: PACKAGE_ROOT,
        stdio: ['ignore', 'ignore', 'inherit'],
      },
    );
    renameSync(staging, dir);
    return dir;
  });
}

/**
 * A copy of the repository (`copyProject`: the examples' project, for test/examples and test/package; the engine's
 * tests use `copyFixtureProject(dir, { built: true })`) that runs the built engine, as a project with the package
 * installed does: no engine source
 * but the templates `stepwise new` copies, the compiled `dist/`, and `stepwise` resolved by the package's own name
 * (no `paths` mapping it to the source).
 */
export function copyBuiltProject(target: string): string {
  const built = builtPackage();
  copyProject(target);
  rmSync(join(target, 'src'), { recursive: true, force: true });
  cpSync(join(PACKAGE_ROOT, 'src', 'cli', 'templates'), join(target, 'src', 'cli', 'templates'), { recursive: true });
  cpSync(join(built, 'dist'), join(target, 'dist'), { recursive: true });
  const tsconfig = JSON.parse(readFileSync(join(target, 'tsconfig.json'), 'utf8'));
  delete tsconfig.compilerOptions.paths;
  writeFileSync(join(target, 'tsconfig.json'), JSON.stringify(tsconfig, null, 2));
  return target;
}
