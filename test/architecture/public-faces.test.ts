/**
 * The public faces are pinned: the names each entry of `package.json` `exports` exports, values and types, are the
 * ones `public-faces.txt` lists, so adding, removing or retyping an export changes that file and shows in review.
 * After a deliberate change: `npx vitest run test/architecture/public-faces.test.ts -u`, and a CHANGELOG line for what
 * a user's project imports differently. Every entry has a face file in a layer of `src/` (a file at the top of it in
 * FACES), whose opening comment names the import; a new entry cannot come in unpinned.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { faceProblems, facesText, publicFaces } from './faces.ts';

describe('the public faces', () => {
  it('export the names public-faces.txt lists, entry by entry', async () => {
    await expect(facesText()).toMatchFileSnapshot('./public-faces.txt');
  });

  it('are each a face file in a layer, named in its opening comment, with a FACES entry at the top of src/', () => {
    const faces = publicFaces();
    expect(faces.map((f) => f.entry)).toContain('stepwise');
    expect(faceProblems(faces)).toEqual([]);
  });
});

/** A package `pkg` in a temporary folder with these files (and an `index.ts` face). */
function tinyPackage(files: Record<string, string>, exports: Record<string, unknown> = {}): string {
  const root = mkdtempSync(join(tmpdir(), 'stepwise-faces-'));
  const write = (file: string, text: string) => {
    mkdirSync(dirname(join(root, file)), { recursive: true });
    writeFileSync(join(root, file), text);
  };
  const pkgExports = { '.': { types: './dist/index.d.ts', default: './dist/index.js' }, ...exports };
  write('package.json', JSON.stringify({ name: 'pkg', type: 'module', exports: pkgExports }));
  write(
    'src/runtime/tools.ts',
    'export const e = 1;\nexport class F {}\nexport interface G {}\nexport function h() {}\n',
  );
  for (const [file, text] of Object.entries(files)) write(file, text);
  return root;
}

const INDEX = [
  '/** `pkg`: a tiny face. */',
  'import { type G, h } from "./runtime/tools.ts";',
  'export const a = 1;',
  'export type B = string;',
  'export interface C {}',
  'export class D {}',
  'export { e } from "./runtime/tools.ts";',
  'export type { F } from "./runtime/tools.ts";',
  'export { G, h };',
].join('\n');

describe('the face check (it can fail)', () => {
  it('lists every name a face exports, types as types, and shows an added or retyped one', () => {
    const root = tinyPackage(
      { 'src/index.ts': INDEX, 'src/extra.ts': '/** `pkg/extra`: more. */\nexport * from "./runtime/tools.ts";\n' },
      { './extra': { default: './dist/extra.js' }, './package.json': './package.json' },
    );
    const pinned = [
      'pkg (src/index.ts)',
      '  a',
      '  type B',
      '  type C',
      '  D',
      '  e',
      '  type F',
      '  type G',
      '  h',
      '',
      'pkg/extra (src/extra.ts)',
      '  e',
      '  F',
      '  type G',
      '  h',
      '',
    ].join('\n');
    expect(facesText(root)).toBe(pinned);

    writeFileSync(join(root, 'src/index.ts'), `${INDEX}\nexport const added = 2;\n`);
    expect(facesText(root)).not.toBe(pinned);
    expect(facesText(root)).toContain('pkg (src/index.ts)\n  a\n  added\n  type B\n');

    writeFileSync(join(root, 'src/index.ts'), INDEX.replace('export { e }', 'export type { e }'));
    expect(facesText(root)).toContain('  D\n  type e\n');
  });

  it('names an entry with no face file, a face in no layer or missing from FACES, an unnamed import, a stale FACES entry', () => {
    const root = tinyPackage(
      {
        'src/index.ts': INDEX,
        'src/extra.ts': 'export const x = 1;\n',
        'src/runtime/deep.ts': '/** `pkg/deep` */\nexport const y = 1;\n',
        'src/runtime/index.ts': '/** `pkg/runtime`: the layer. */\nexport const z = 1;\n',
      },
      {
        './extra': { default: './dist/extra.js' },
        './gone': { default: './dist/gone.js' },
        './deep': { default: './dist/runtime/deep.js' },
        './runtime': { default: './dist/runtime/index.js' },
      },
    );
    expect(faceProblems(publicFaces(root), root, { 'index.ts': 'runtime', 'stale.ts': 'core' })).toEqual([
      'pkg/extra: src/extra.ts has no entry in FACES (docs/generate/architecture.ts)',
      'pkg/extra: src/extra.ts does not open with a TSDoc comment that names `pkg/extra`',
      'pkg/gone: no face file src/gone.ts',
      "pkg/deep: src/runtime/deep.ts is not the index.ts of a layer's folder",
      'FACES names src/stale.ts, which no entry exports',
    ]);
  });
});
