/** The package.json that `npm pack` ships: the prepack/postpack pair of package.json. */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useTempDirs } from '../support/tmp.ts';

const root = join(import.meta.dirname, '../..');
const script = join(root, 'bin/pack-manifest.mjs');
const tempDir = useTempDirs('stepwise-pack-manifest-');

describe('the packed package.json', () => {
  it('is run by npm pack around the build: prepack strips, postpack restores', () => {
    const { scripts } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
    expect(scripts.prepare).toBe('node bin/link-self.mjs');
    expect(scripts.prepack).toMatch(/node bin\/pack-manifest\.mjs strip$/);
    expect(scripts.postpack).toBe('node bin/pack-manifest.mjs restore');
  });

  it('has no prepare script (bin/link-self.mjs is not in the tarball), and the file is restored byte for byte', () => {
    const dir = tempDir();
    const original = readFileSync(join(root, 'package.json'), 'utf8');
    writeFileSync(join(dir, 'package.json'), original);
    execFileSync(process.execPath, [script, 'strip', dir]);
    const packed = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    expect(packed.scripts.prepare).toBeUndefined();
    expect(packed.scripts.build).toBe('node bin/build.mjs');
    execFileSync(process.execPath, [script, 'restore', dir]);
    expect(readFileSync(join(dir, 'package.json'), 'utf8')).toBe(original);
  });
});
