/**
 * The public faces: each entry of `package.json` `exports` that is code, the source file it is compiled from, and
 * the names it exports, values and types, as TypeScript's checker reads them. `public-faces.test.ts` pins the names
 * in `public-faces.txt`, so an added, removed or retyped export is a line of a reviewed diff, and holds every entry
 * to a face file in a layer of `src/`.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { FACES, layerOf } from '../../docs/generate/architecture.ts';
import { PACKAGE_ROOT } from '../../src/core/paths.ts';

/** An entry point and the source file it is compiled from (`stepwise/cdk`, `src/cdk/index.ts`). */
export interface Face {
  readonly entry: string;
  readonly file: string;
}

/** The entries of `package.json` `exports` under `root` whose target is JavaScript, each with its source file. */
export function publicFaces(root = PACKAGE_ROOT): Face[] {
  const { name, exports } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
    name: string;
    exports: Record<string, string | { default?: string }>;
  };
  return Object.entries(exports).flatMap(([key, target]) => {
    const js = typeof target === 'string' ? target : target.default;
    if (!js?.endsWith('.js')) return [];
    return [{ entry: name + key.slice(1), file: js.replace(/^\.\/dist\//, 'src/').replace(/\.js$/, '.ts') }];
  });
}

/** The TypeScript sources under `dir`, without declarations and the project templates `stepwise new` copies. */
const sources = (dir: string): string[] =>
  readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .map((file) => file.split('\\').join('/'))
    .filter((file) => /\.m?ts$/.test(file) && !file.endsWith('.d.ts') && !/(^|\/)(templates|dist)\//.test(file))
    .map((file) => join(dir, file));

/** An export made with `type` on the way (`export type { X }`, `export { type X }`, `import { type X }`, `import type`). */
function typeOnly(declaration: ts.Declaration): boolean {
  if (ts.isExportSpecifier(declaration)) return declaration.isTypeOnly || declaration.parent.parent.isTypeOnly;
  if (ts.isImportSpecifier(declaration)) return declaration.isTypeOnly || declaration.parent.parent.isTypeOnly;
  if (ts.isImportClause(declaration)) return declaration.isTypeOnly;
  return false;
}

/** The order of `public-faces.txt`: by name, whatever its case, a type among the values. */
const byName = (line: string) => line.replace(/^type /, '').toLowerCase();

/**
 * The names each face exports, sorted, a type (an interface, a type alias, a type-only export) as `type Name`. Only the
 * sources of `root/src` are read (no package's declarations: a second, not twelve); a name a face takes from a package
 * cannot be followed and throws.
 */
export function faceExports(faces: readonly Face[], root = PACKAGE_ROOT): Record<string, string[]> {
  const program = ts.createProgram(sources(join(root, 'src')), {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    allowImportingTsExtensions: true,
    noEmit: true,
    noResolve: true,
    noLib: true,
    types: [],
  });
  const checker = program.getTypeChecker();
  const names: Record<string, string[]> = {};
  for (const { entry, file } of faces) {
    const source = program.getSourceFile(join(root, file));
    const module = source && checker.getSymbolAtLocation(source);
    if (!module) throw new Error(`${entry}: ${file} is not a module of ${join(root, 'src')}`);
    names[entry] = checker
      .getExportsOfModule(module)
      .map((symbol) => {
        let target = symbol;
        let type = false;
        while (target.flags & ts.SymbolFlags.Alias) {
          type ||= (target.declarations ?? []).some(typeOnly);
          const next = checker.getImmediateAliasedSymbol(target);
          if (!next?.declarations?.length) throw new Error(`${entry}: ${symbol.name} cannot be followed to its source`);
          target = next;
        }
        return type || !(target.flags & ts.SymbolFlags.Value) ? `type ${symbol.name}` : symbol.name;
      })
      .sort((a, b) => (byName(a) < byName(b) ? -1 : byName(a) > byName(b) ? 1 : 0));
  }
  return names;
}

/** The faces' names as `public-faces.txt` holds them: an entry and its file, then one name a line. */
export function facesText(root = PACKAGE_ROOT): string {
  const faces = publicFaces(root);
  const names = faceExports(faces, root);
  return (
    faces
      .map(({ entry, file }) => [`${entry} (${file})`, ...names[entry]!.map((n) => `  ${n}`)].join('\n'))
      .join('\n\n') + '\n'
  );
}

/**
 * Why a face is not pinned, one line each: its file is missing; it is neither a file at the top of `src/` that
 * `faceLayers` (the architecture's FACES) places in a layer, nor the `index.ts` of a layer's folder; its opening
 * comment does not name its import; a FACES entry is no entry of `exports`.
 */
export function faceProblems(faces: readonly Face[], root = PACKAGE_ROOT, faceLayers = FACES): string[] {
  const problems: string[] = [];
  for (const { entry, file } of faces) {
    const inSrc = file.replace(/^src\//, '');
    if (!existsSync(join(root, file))) {
      problems.push(`${entry}: no face file ${file}`);
      continue;
    }
    const top = !inSrc.includes('/');
    const layer = top ? faceLayers[inSrc] : /^[^/]+\/index\.ts$/.test(inSrc) ? layerOf(inSrc) : undefined;
    if (!layer)
      problems.push(
        top
          ? `${entry}: ${file} has no entry in FACES (docs/generate/architecture.ts)`
          : `${entry}: ${file} is not the index.ts of a layer's folder`,
      );
    if (!/^\/\*\*[\s\S]*?\*\//.exec(readFileSync(join(root, file), 'utf8'))?.[0].includes(`\`${entry}\``))
      problems.push(`${entry}: ${file} does not open with a TSDoc comment that names \`${entry}\``);
  }
  for (const face of Object.keys(faceLayers))
    if (!faces.some((f) => f.file === `src/${face}`)) problems.push(`FACES names src/${face}, which no entry exports`);
  return problems;
}
