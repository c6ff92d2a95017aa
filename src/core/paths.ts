/**
 * Where things are. The engine's own files sit beside this module, wherever the package is
 * installed; a project's files (its `statemachines/`, workflow code, config and local state) are
 * found from the working directory, the way git and npm find theirs. Nothing of a project is ever
 * looked up relative to the engine.
 */
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The engine's root: `<package>/src` when it runs from source, `<package>/dist` when installed
 * (`core/`, `runtime/`, `cdk/`, `local/`, `evals/` and `cli/` sit under it either way).
 */
export const ENGINE_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** The package's root, where its package.json and bin are: the engine root's parent. */
export const PACKAGE_ROOT = dirname(ENGINE_ROOT);

/**
 * The installed Stepwise version (package.json). A Lambda bundle has no package.json: the bundler
 * defines `STEPWISE_VERSION` there.
 */
export const STEPWISE_VERSION: string =
  process.env.STEPWISE_LAMBDA_BUNDLE === undefined
    ? (JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version: string }).version
    : (process.env.STEPWISE_VERSION ?? 'unknown');

/** `.ts` when the engine runs from its TypeScript source, `.js` when it runs compiled. */
export const ENGINE_MODULE_EXTENSION = import.meta.url.endsWith('.ts') ? '.ts' : '.js';

/** An engine module's file, from its path under the engine root without extension (`runtime/step-handler/handler`). */
export const engineModule = (path: string): string => join(ENGINE_ROOT, `${path}${ENGINE_MODULE_EXTENSION}`);

/** A folder is a Stepwise project when it has a `package.json` and a `statemachines/` folder or a `stepwise.config.ts`. */
export function isProjectRoot(dir: string): boolean {
  return (
    existsSync(join(dir, 'package.json')) &&
    (existsSync(join(dir, 'statemachines')) || existsSync(join(dir, 'stepwise.config.ts')))
  );
}

/**
 * The project `from` is in: `STEPWISE_PROJECT_ROOT` when set, else the nearest folder at or above
 * `from` that {@link isProjectRoot}, else `from` itself (commands then say what is missing there).
 */
export function findProjectRoot(from: string = process.cwd()): string {
  if (process.env.STEPWISE_PROJECT_ROOT) return resolve(process.env.STEPWISE_PROJECT_ROOT);
  for (let dir = resolve(from); ; dir = dirname(dir)) {
    if (isProjectRoot(dir)) return dir;
    if (dirname(dir) === dir) return resolve(from);
  }
}

/** The project of this process, found once from the working directory at start. */
export const PROJECT_ROOT = findProjectRoot();
/** The project's workflow and lifecycle definitions. */
export const STATEMACHINES_DIR = join(PROJECT_ROOT, 'statemachines');
/**
 * The folder a function finds its workflow folders in: `STATEMACHINES_DIR` of its environment
 * (set on Lambda, where the folder is shipped with the code), else the project's.
 * @example join(statemachinesDir(env), workflow, 'data', 'orders.json') // a file a tool of `workflow` reads
 */
export const statemachinesDir = (env: Readonly<Record<string, string | undefined>> = process.env): string =>
  env.STATEMACHINES_DIR ?? STATEMACHINES_DIR;
/** The project's workflow code: `lambdas/workflows/<workflow>/{steps,tools}/`. */
export const WORKFLOW_CODE_DIR = join(PROJECT_ROOT, 'lambdas', 'workflows');
/** The project's local state (executions, pauses, eval runs): git-ignored. */
export const STATE_DIR = join(PROJECT_ROOT, '.stepwise');

/**
 * What every project of the user shares (the DynamoDB Local download, the state machine definitions the local
 * interpreter accepted):
 * `STEPWISE_CACHE_DIR`, else `$XDG_CACHE_HOME/stepwise`, else `~/.cache/stepwise`.
 */
export function cacheDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.STEPWISE_CACHE_DIR) return resolve(env.STEPWISE_CACHE_DIR);
  return join(env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'stepwise');
}
