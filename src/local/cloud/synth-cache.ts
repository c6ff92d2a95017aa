/**
 * A project's synthesized app, kept between processes: loading the CDK and building the stacks is
 * most of a local command's startup (`stepwise synth`, `run`, `eval`), and its result changes only
 * when one of its inputs does. An entry records every input with its content hash: the
 * `statemachines/` files, the config and workflow code as the bundler read them (their own imports
 * included), the lockfile, and the engine: its version where installed, the hash of its source files where it runs
 * from source (this repository's CLI and tests, where the engine changes between runs). A lookup re-hashes them; one
 * changed, added or removed file and the entry is not used.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import * as z from 'zod';
import { ENGINE_MODULE_EXTENSION, ENGINE_ROOT, PACKAGE_ROOT } from '../../core/paths.ts';
import { projectModuleInputs } from '../../core/project-modules.ts';
import type { CfnTemplate } from './intrinsics.ts';

/** A stack's concrete region/account, when it has one (environment-agnostic stacks use the local placeholders). */
export interface StackEnvironment {
  region?: string;
  accountId?: string;
}

/** What a synth produces, as stored. */
export interface SynthOutput {
  templates: Record<string, CfnTemplate>;
  environments: Record<string, StackEnvironment>;
}

const Entry = z.object({
  engine: z.string(),
  /** Input file (relative to the project root) → sha256 of its content. */
  inputs: z.record(z.string(), z.string()),
  output: z.object({
    templates: z.record(z.string(), z.any()),
    environments: z.record(z.string(), z.object({ region: z.string().optional(), accountId: z.string().optional() })),
  }),
});

let engine: string | undefined;

/**
 * The engine an entry was made by: its package.json and where it is installed (a reinstall is another engine); from
 * source, also every file of its source (an edit is another engine; Studio's browser code and the templates of
 * `stepwise new` are not part of a synth).
 */
function engineId(): string {
  if (engine) return engine;
  const hash = createHash('sha256')
    .update(readFileSync(join(PACKAGE_ROOT, 'package.json')))
    .update(PACKAGE_ROOT);
  if (ENGINE_MODULE_EXTENSION === '.ts')
    for (const entry of readdirSync(ENGINE_ROOT, { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile())
      .map((e) => relative(ENGINE_ROOT, join(e.parentPath, e.name)))
      .filter((f) => !/^cli[\\/](templates|studio[\\/](ui|dist))[\\/]/.test(f))
      .sort())
      hash
        .update(`${entry}\0`)
        .update(readFileSync(join(ENGINE_ROOT, entry)))
        .update('\0');
  engine = hash.digest('hex').slice(0, 16);
  return engine;
}

const hashFile = (file: string): string =>
  existsSync(file) ? createHash('sha256').update(readFileSync(file)).digest('hex') : 'missing';

/** Every file under `dir`, relative to `root`. */
function filesUnder(root: string, dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .map((f) => join(dir, f))
    .filter((f) => statSync(f).isFile())
    .map((f) => relative(root, f));
}

/** The inputs every synth of `root` reads besides its modules: the definitions and the lockfile. */
const baseInputs = (root: string): string[] => [
  ...filesUnder(root, join(root, 'statemachines')),
  'package-lock.json',
  'package.json',
];

const entryFile = (root: string, key: string) => join(root, '.stepwise', 'cache', `synth-${key}.json`);

/** Whether entries are kept at all (`STEPWISE_SYNTH_CACHE=off` turns it off). */
export const synthCacheEnabled = (): boolean => process.env.STEPWISE_SYNTH_CACHE !== 'off';

/** The stored output under `key` (an environment, or an app of one environment), when every input it was made from is unchanged. */
export function readSynthCache(root: string, key: string): SynthOutput | undefined {
  const file = entryFile(root, key);
  if (!synthCacheEnabled() || !existsSync(file)) return undefined;
  const parsed = Entry.safeParse(JSON.parse(readFileSync(file, 'utf8')));
  if (!parsed.success || parsed.data.engine !== engineId()) return undefined;
  const { inputs, output } = parsed.data;
  const now = new Set([...baseInputs(root), ...Object.keys(inputs)]);
  if (now.size !== Object.keys(inputs).length) return undefined;
  for (const [path, hash] of Object.entries(inputs)) if (hashFile(join(root, path)) !== hash) return undefined;
  return output as SynthOutput;
}

/** Keep `output` under `key`, with the hashes of everything it was made from. */
export async function writeSynthCache(root: string, key: string, output: SynthOutput): Promise<void> {
  if (!synthCacheEnabled()) return;
  const paths = [...new Set([...baseInputs(root), ...(await projectModuleInputs(root))])].sort();
  const entry = {
    engine: engineId(),
    inputs: Object.fromEntries(paths.map((p) => [p, hashFile(join(root, p))])),
    output,
  };
  const file = entryFile(root, key);
  mkdirSync(join(root, '.stepwise', 'cache'), { recursive: true });
  const temporary = `${file}.${process.pid}`;
  writeFileSync(temporary, JSON.stringify(entry));
  renameSync(temporary, file);
}
