#!/usr/bin/env node
// The package build (`npm run build`, run by `npm pack`): the engine (src/) compiled to dist/ with its
// declarations, the files it reads at run time beside it, Studio's browser bundle, and the CLI's
// command index (so `stepwise --help` loads no command).
// The JavaScript comes from esbuild, file by file (tsc took 40 s of CPU to emit it, most of it reading the CDK's and the
// SDK's declarations); TypeScript 7's native tsc type-checks the engine and writes the declarations only (12 s of CPU
// where tsc 5.9 took 39).
// `--out DIR` builds into DIR instead of dist/ (DIR's parent needs the package.json); `--no-check` emits JavaScript
// only, without type checking or declarations (the tests' build: the type check is a test of its own).
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = fileURLToPath(new URL('..', import.meta.url));
const src = join(root, 'src');
const out = process.argv.indexOf('--out');
const dist = out > 0 ? resolve(process.argv[out + 1]) : join(root, 'dist');
/** What tsconfig.build.json leaves out of the engine: the templates `stepwise new` copies and Studio's browser sources. */
const NOT_ENGINE = /^cli\/(templates|studio\/(ui|dist))\//;

rmSync(dist, { recursive: true, force: true });
const entryPoints = readdirSync(src, { recursive: true, encoding: 'utf8' })
  .map((file) => file.split('\\').join('/'))
  .filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts') && !NOT_ENGINE.test(file))
  .map((file) => join(src, file));
// Each module compiled on its own, as tsc does; a relative import of a `.ts` file then names its `.js` output.
const { outputFiles } = await build({
  entryPoints,
  outdir: dist,
  outbase: src,
  platform: 'node',
  format: 'esm',
  // The engines field's Node: import attributes (`with { type: 'json' }`) stay as written.
  target: 'node22',
  write: false,
  logLevel: 'warning',
});
for (const file of outputFiles) {
  mkdirSync(dirname(file.path), { recursive: true });
  writeFileSync(
    file.path,
    file.text.replace(/(\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)"(\.\.?\/[^"]+)\.ts"/g, '$1"$2.js"'),
  );
}
if (!process.argv.includes('--no-check'))
  execFileSync(
    process.execPath,
    [
      join(root, 'node_modules/typescript-native/bin/tsc'),
      '-p',
      join(root, 'tsconfig.build.json'),
      '--outDir',
      dist,
      '--emitDeclarationOnly',
    ],
    { stdio: 'inherit' },
  );
// Data the engine reads by path (not imported, so neither compiler copies it).
cpSync(join(root, 'src/evals/prices.json'), join(dist, 'evals/prices.json'));
// Studio's browser bundle, prebuilt beside its compiled server (the package ships no UI sources).
const { register } = await import('tsx/esm/api');
register();
const { writeUiBundle } = await import(join(root, 'src/cli/studio/assets.ts'));
await writeUiBundle(join(dist, 'cli/studio/dist'));
const { commandIndex, COMMAND_INDEX_FILE } = await import(join(dist, 'cli/program.js'));
writeFileSync(join(dist, 'cli', COMMAND_INDEX_FILE), JSON.stringify(await commandIndex(), null, 2));
