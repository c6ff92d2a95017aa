/**
 * A throwaway copy of a project, for tests that add a workflow the way a user would and run the real CLI and `cdk
 * synth` on it: the commands that run there, and `copyProject`, a copy of the repository (the examples' project) for
 * test/examples and test/package. The engine's tests copy the fixture project instead (`copyFixtureProject`,
 * fixture-project.ts).
 */
import { spawn } from 'node:child_process';
import { cpSync, readdirSync, readFileSync, statSync, symlinkSync } from 'node:fs';
import { join, relative } from 'node:path';
import { PACKAGE_ROOT } from '../../src/core/paths.ts';

// dist: `npm pack` (the package test) may be rewriting it while another test copies; a built copy brings its own.
const SKIPPED = new Set(['node_modules', '.git', '.stepwise', 'coverage', 'dist']);

/**
 * Copy the repository (the working tree, without node_modules, .git and build output, which are linked or left out)
 * into `dir` (which must exist and be empty); node_modules is linked.
 */
export function copyProject(dir: string): string {
  for (const entry of readdirSync(PACKAGE_ROOT)) {
    if (SKIPPED.has(entry) || entry.startsWith('cdk.out') || entry === 'test-results.json') continue;
    cpSync(join(PACKAGE_ROOT, entry), join(dir, entry), { recursive: true });
  }
  symlinkSync(join(PACKAGE_ROOT, 'node_modules'), join(dir, 'node_modules'));
  return dir;
}

/** Every file under `dir` (relative paths) with its content, for before/after comparisons. */
export function snapshotFiles(dir: string, skip: (path: string) => boolean = () => false): Map<string, string> {
  const files = new Map<string, string>();
  const walk = (at: string) => {
    for (const entry of readdirSync(at)) {
      const path = join(at, entry);
      const rel = relative(dir, path);
      if (SKIPPED.has(entry) || entry.startsWith('cdk.out') || skip(rel)) continue;
      if (statSync(path).isDirectory()) walk(path);
      else files.set(rel, readFileSync(path, 'utf8'));
    }
  };
  walk(dir);
  return files;
}

export interface Ran {
  code: number;
  out: string;
  err: string;
}

/**
 * The environment of a command run in a copy: the test's, but without its own `STEPWISE_PROJECT_ROOT` (the engine
 * tests' fixture project), so the command finds its project from its working folder.
 */
export function copyEnv(): NodeJS.ProcessEnv {
  const { STEPWISE_PROJECT_ROOT: _, ...env } = process.env;
  return { ...env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' };
}

/**
 * Run a command in `cwd` to its end (no shell), e.g. `run(dir, 'node', 'bin/stepwise.mjs', 'validate')`, in
 * {@link copyEnv}: the command finds its project from `cwd`.
 */
export function run(cwd: string, command: string, ...args: string[]): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env: copyEnv() });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? 1, out, err }));
  });
}

/** `stepwise <args>` in the copy at `cwd`. */
export const stepwise = (cwd: string, ...args: string[]) => run(cwd, process.execPath, 'bin/stepwise.mjs', ...args);

/** `cdk synth` of one stack of the copy at `cwd` (bundling included), as a user runs it: the stack's template. */
export async function cdkSynthStack(cwd: string, stack: string): Promise<any> {
  const synth = await run(
    cwd,
    process.execPath,
    'node_modules/aws-cdk/bin/cdk',
    'synth',
    '-c',
    'env=dev',
    '-q',
    '-o',
    'cdk.out.test',
    // The other stacks' functions are not bundled: only this stack's template is read.
    '--exclusively',
    stack,
  );
  if (synth.code !== 0) throw new Error(`cdk synth ${stack} exited with ${synth.code}:\n${synth.err}`);
  return JSON.parse(readFileSync(join(cwd, 'cdk.out.test', `${stack}.template.json`), 'utf8'));
}
