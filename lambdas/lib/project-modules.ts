/**
 * Importing a project's own modules (workflow code, its config, CLI extensions) from wherever the
 * engine runs. A project writes TypeScript; the engine installed from npm is JavaScript running on
 * plain Node, so the TypeScript loader (tsx) is registered on the first project module, once.
 * From source (tests, this repository's CLI) a loader is already there.
 */
import { existsSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { ENGINE_MODULE_EXTENSION } from './project.ts';

/** The extensions a project module may have, in the order they are looked for. */
const MODULE_EXTENSIONS = ['.ts', '.mts', '.js', '.mjs'] as const;

/** The file of a project module given without extension (the first that exists), or its `.ts` name. */
export function projectModuleFile(pathWithoutExtension: string): string {
  for (const ext of MODULE_EXTENSIONS) if (existsSync(pathWithoutExtension + ext)) return pathWithoutExtension + ext;
  return `${pathWithoutExtension}.ts`;
}

let loader: Promise<unknown> | undefined;
// A ternary on the constant esbuild defines, so a Lambda bundle leaves the loader out.
const importTsx = process.env.STEPWISE_LAMBDA_BUNDLE === undefined ? () => import('tsx/esm/api') : undefined;

/**
 * Make `import()` of a `.ts` file work in this process: a no-op when the engine itself runs from
 * TypeScript, and in a Lambda bundle (whose modules are all inside it; esbuild drops the loader).
 */
export function ensureTypeScriptLoader(): Promise<unknown> {
  if (!importTsx || ENGINE_MODULE_EXTENSION === '.ts') return Promise.resolve();
  loader ??= importTsx().then(({ register }) => register());
  return loader;
}

/**
 * Import a project module by its path without extension (`<root>/lambdas/workflows/x/tools/y`).
 * @returns the module, or undefined when no such file exists.
 */
export async function importProjectModule<T = { default?: unknown }>(pathWithoutExtension: string): Promise<T | undefined> {
  const file = projectModuleFile(pathWithoutExtension);
  if (!existsSync(file)) return undefined;
  if (/\.m?ts$/.test(file)) await ensureTypeScriptLoader();
  return (await import(pathToFileURL(file).href)) as T;
}
