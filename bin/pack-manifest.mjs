#!/usr/bin/env node
// The package.json `npm pack` puts in the tarball: without the `prepare` script, which runs
// bin/link-self.mjs, a file the tarball does not ship (npm warns on every install otherwise).
// `strip` (prepack) keeps the exact file aside and writes the packed one; `restore` (postpack)
// puts the exact file back. An optional second argument is the package folder (default: here).
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const [action, dir = process.cwd()] = process.argv.slice(2);
const manifest = join(dir, 'package.json');
const kept = join(dir, '.package.json.unpacked');

if (action === 'strip') {
  const text = readFileSync(manifest, 'utf8');
  const pkg = JSON.parse(text);
  if (!existsSync(kept)) writeFileSync(kept, text);
  delete pkg.scripts?.prepare;
  writeFileSync(manifest, `${JSON.stringify(pkg, null, 2)}\n`);
} else if (action === 'restore') {
  if (existsSync(kept)) renameSync(kept, manifest);
} else {
  process.stderr.write('usage: node bin/pack-manifest.mjs strip|restore [package folder]\n');
  process.exitCode = 2;
}
