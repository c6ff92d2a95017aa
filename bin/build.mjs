#!/usr/bin/env node
// The package build (`npm run build`, run by `npm pack`): the engine (src/) compiled to dist/ with its
// declarations, the files it reads at run time beside it, Studio's browser bundle, and the CLI's
// command index (so `stepwise --help` loads no command).
// `--out DIR` builds into DIR instead of dist/ (DIR's parent needs the package.json); `--no-check` emits JavaScript
// only, without type checking or declarations (the tests' build: the type check is a test of its own).
import { execFileSync } from 'node:child_process';
import { cpSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const out = process.argv.indexOf('--out');
const dist = out > 0 ? resolve(process.argv[out + 1]) : join(root, 'dist');
rmSync(dist, { recursive: true, force: true });
execFileSync(
  process.execPath,
  [
    join(root, 'node_modules/typescript/bin/tsc'),
    '-p',
    join(root, 'tsconfig.build.json'),
    '--outDir',
    dist,
    ...(process.argv.includes('--no-check') ? ['--noCheck', '--declaration', 'false'] : []),
  ],
  { stdio: 'inherit' },
);
// Data the engine reads by path (not imported, so tsc does not copy it).
cpSync(join(root, 'src/evals/prices.json'), join(dist, 'evals/prices.json'));
// Studio's browser bundle, prebuilt beside its compiled server (the package ships no UI sources).
const { register } = await import('tsx/esm/api');
register();
const { writeUiBundle } = await import(join(root, 'src/cli/studio/assets.ts'));
await writeUiBundle(join(dist, 'cli/studio/dist'));
const { commandIndex, COMMAND_INDEX_FILE } = await import(join(dist, 'cli/program.js'));
writeFileSync(join(dist, 'cli', COMMAND_INDEX_FILE), JSON.stringify(await commandIndex(), null, 2));
