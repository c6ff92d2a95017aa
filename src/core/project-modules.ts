/**
 * Importing a project's own modules (workflow code, its config, CLI extensions) from wherever the
 * engine runs. A project writes TypeScript. From source (this repository's tests and CLI) a
 * TypeScript loader is already there and the files are imported as they are. The engine installed
 * from npm is JavaScript on plain Node: there, esbuild (the bundler the Lambda functions are built
 * with) bundles the project's modules into one ES module under `.stepwise/modules/`, leaving every
 * package (`stepwise` included) to the project's `node_modules`, and that is imported. Modules
 * imported together are one bundle, so they share their helpers as in a Lambda bundle.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ENGINE_MODULE_EXTENSION } from './paths.ts';

/** The extensions a project module may have, in the order they are looked for. */
const MODULE_EXTENSIONS = ['.ts', '.mts', '.js', '.mjs'] as const;

/** A module as imported. */
export type ProjectModule = { default?: unknown } & Record<string, unknown>;

/** The file of a project module given without extension (the first that exists), or its `.ts` name. */
export function projectModuleFile(pathWithoutExtension: string): string {
  for (const ext of MODULE_EXTENSIONS) if (existsSync(pathWithoutExtension + ext)) return pathWithoutExtension + ext;
  return `${pathWithoutExtension}.ts`;
}

/** The modules of a folder (`lambdas/workflows/<name>/tools`), by name without extension. */
export function folderModules(dir: string): Record<string, string> {
  if (!existsSync(dir)) return {};
  const names = new Set(
    readdirSync(dir)
      .filter((f) => /\.m?[jt]s$/.test(f) && !f.endsWith('.d.ts'))
      .map((f) => f.replace(/\.m?[jt]s$/, '')),
  );
  return Object.fromEntries([...names].sort().map((name) => [name, projectModuleFile(join(dir, name))]));
}

/** Every file a bundle of this process read (absolute paths): what a cached synth depends on (src/local/cloud/synth-cache.ts). */
const inputsRead = new Set<string>();
/** The project modules this process imported as they are (from source, through the TypeScript loader). */
const importedUnbundled = new Set<string>();

// A ternary on the constant a Lambda bundle defines: the bundle leaves esbuild out.
const importEsbuild = process.env.STEPWISE_LAMBDA_BUNDLE === undefined ? () => import('esbuild') : undefined;

/**
 * The files of `root` (relative, outside `node_modules`) that this process's project modules read: those its bundles
 * read and, for modules imported as they are, those the bundler finds they import (asked only here, on a synth cache
 * miss).
 */
export async function projectModuleInputs(root: string): Promise<string[]> {
  const read = new Set(inputsRead);
  const entries = [...importedUnbundled].filter((f) => !relative(root, f).startsWith('..') && existsSync(f));
  if (entries.length > 0 && importEsbuild) {
    const { build } = await importEsbuild();
    const { metafile } = await build({
      entryPoints: entries,
      absWorkingDir: root,
      outdir: join(root, '.stepwise', 'modules'),
      bundle: true,
      write: false,
      format: 'esm',
      platform: 'node',
      packages: 'external',
      metafile: true,
      logLevel: 'silent',
    });
    for (const input of Object.keys(metafile.inputs)) read.add(resolve(root, input));
  }
  return [...read]
    .map((f) => relative(root, f))
    .filter((f) => !f.startsWith('..') && !f.split(/[\\/]/).includes('node_modules'));
}

const sha256 = (data: string | Buffer): string => createHash('sha256').update(data).digest('hex');

/** What a bundle was built from (file → content hash, relative to the project root) and its output file. */
interface BundleIndex {
  inputs: Record<string, string>;
  output: string;
}

/** The bundle of `entry` built earlier, when none of its inputs changed since. */
function builtBefore(indexFile: string, root: string): BundleIndex | undefined {
  if (!existsSync(indexFile)) return undefined;
  const index = JSON.parse(readFileSync(indexFile, 'utf8')) as BundleIndex;
  const unchanged = Object.entries(index.inputs).every(
    ([path, hash]) => existsSync(join(root, path)) && sha256(readFileSync(join(root, path))) === hash,
  );
  return unchanged && existsSync(join(dirname(indexFile), index.output)) ? index : undefined;
}

/** Write `text` to `file` atomically (processes may build the same bundle at once). */
function writeAtomically(file: string, text: string): void {
  const temporary = `${file}.${process.pid}`;
  writeFileSync(temporary, text);
  renameSync(temporary, file);
}

/**
 * Bundle `files` (by name) into one module under `<root>/.stepwise/modules/` and import it. A bundle
 * is rebuilt only when one of the files it read changed: its index keeps their hashes, so an
 * unchanged project starts without the bundler.
 */
async function importBundled(files: Record<string, string>, root: string): Promise<Record<string, ProjectModule>> {
  const names = Object.keys(files);
  const entry = names.map((name, i) => `export * as m${i} from ${JSON.stringify(files[name])};`).join('\n');
  const dir = join(root, '.stepwise', 'modules');
  const indexFile = join(dir, `${sha256(entry).slice(0, 16)}.json`);
  let index = builtBefore(indexFile, root);
  if (!index) {
    const { build } = await importEsbuild!();
    const result = await build({
      stdin: { contents: entry, resolveDir: root, loader: 'js', sourcefile: ENTRY_NAME },
      bundle: true,
      write: false,
      format: 'esm',
      platform: 'node',
      // The engines field's Node: import attributes (`with { type: 'json' }`) stay as written.
      target: 'node22',
      packages: 'external',
      metafile: true,
      logLevel: 'silent',
    });
    const text = result.outputFiles[0]!.text;
    const inputs = Object.keys(result.metafile.inputs).filter((input) => input !== ENTRY_NAME);
    // Named by content: a changed module is a new file (Node caches modules by URL), an unchanged one is reused.
    index = {
      inputs: Object.fromEntries(
        inputs.map((input) => [relative(root, resolve(root, input)), sha256(readFileSync(resolve(root, input)))]),
      ),
      output: `${sha256(text).slice(0, 16)}.mjs`,
    };
    mkdirSync(dir, { recursive: true });
    if (!existsSync(join(dir, index.output))) writeAtomically(join(dir, index.output), text);
    writeAtomically(indexFile, JSON.stringify(index));
  }
  for (const input of Object.keys(index.inputs)) inputsRead.add(resolve(root, input));
  const bundle = (await import(pathToFileURL(join(dir, index.output)).href)) as Record<string, ProjectModule>;
  return Object.fromEntries(names.map((name, i) => [name, bundle[`m${i}`]!]));
}

/** The name of the generated entry in the bundler's metafile. */
const ENTRY_NAME = 'stepwise-project-modules.js';

/**
 * Import project modules together (one module graph), by name; a name whose file does not exist is
 * left out. `root` is the project root (its `node_modules` resolve the packages they import).
 */
export async function importProjectModules(
  files: Record<string, string>,
  root: string,
): Promise<Record<string, ProjectModule>> {
  const present = Object.fromEntries(Object.entries(files).filter(([, file]) => existsSync(file)));
  if (Object.keys(present).length === 0) return {};
  if (ENGINE_MODULE_EXTENSION === '.ts' || !importEsbuild) {
    const modules: Record<string, ProjectModule> = {};
    for (const [name, file] of Object.entries(present)) {
      modules[name] = (await import(pathToFileURL(file).href)) as ProjectModule;
      importedUnbundled.add(file);
    }
    return modules;
  }
  return importBundled(present, root);
}

/**
 * Import one project module by its path without extension (`<root>/stepwise.config`).
 * @returns the module, or undefined when no such file exists.
 */
export async function importProjectModule<T = ProjectModule>(
  pathWithoutExtension: string,
  root: string,
): Promise<T | undefined> {
  return (await importProjectModules({ module: projectModuleFile(pathWithoutExtension) }, root)).module as
    | T
    | undefined;
}
