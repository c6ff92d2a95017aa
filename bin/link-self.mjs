// `npx stepwise` resolves bins from node_modules/.bin; npm does not link a project's own bin there.
import { chmodSync, existsSync, mkdirSync, rmSync, symlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const binDir = join(root, 'node_modules', '.bin');
if (existsSync(join(root, 'node_modules'))) {
  mkdirSync(binDir, { recursive: true });
  const link = join(binDir, 'stepwise');
  rmSync(link, { force: true });
  symlinkSync('../../bin/stepwise.mjs', link);
  chmodSync(join(root, 'bin', 'stepwise.mjs'), 0o755);
}
