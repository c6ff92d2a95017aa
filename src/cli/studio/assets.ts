/**
 * Studio's browser code: `ui/` (Preact, TypeScript) bundled with esbuild into one script and one
 * stylesheet, with nothing loaded from elsewhere at run time. In this repository Studio bundles
 * the sources when it starts (in memory, well under a second); `npm run build:studio` writes the
 * same bundle to `dist/` for the package, and Studio serves that when it is there and not older
 * than the sources.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
/** The UI sources. */
export const UI_DIR = join(here, 'ui');
/** Where `npm run build:studio` writes the bundle. */
export const DIST_DIR = join(here, 'dist');
const ENTRY = join(UI_DIR, 'main.tsx');

/** The files Studio serves under `/assets/`, by name. */
export type Assets = ReadonlyMap<string, { type: string; body: Buffer }>;

const TYPES: Record<string, string> = { '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8' };
const typeOf = (name: string) => TYPES[name.slice(name.lastIndexOf('.'))] ?? 'application/octet-stream';

/** Bundle `ui/main.tsx` (and the CSS it imports), minified, as `studio.js` and `studio.css`. */
export async function bundleUi(): Promise<Map<string, Buffer>> {
  const { build } = await import('esbuild');
  const result = await build({
    entryPoints: { studio: ENTRY },
    bundle: true,
    write: false,
    outdir: 'out',
    format: 'esm',
    platform: 'browser',
    target: ['es2022'],
    minify: true,
    jsx: 'automatic',
    jsxImportSource: 'preact',
    legalComments: 'none',
    logLevel: 'silent',
  });
  return new Map(result.outputFiles.map((f) => [f.path.slice(f.path.lastIndexOf('/') + 1), Buffer.from(f.contents)]));
}

/** Write the bundle to `outdir` (`npm run build:studio`). */
export async function writeUiBundle(outdir: string = DIST_DIR): Promise<string[]> {
  const files = await bundleUi();
  mkdirSync(outdir, { recursive: true });
  for (const [name, body] of files) writeFileSync(join(outdir, name), body);
  return [...files.keys()].sort();
}

/** The newest modification time among the UI sources (0 without sources: an installed package). */
function newestSource(dir: string = UI_DIR): number {
  if (!existsSync(dir)) return 0;
  return Math.max(
    0,
    ...readdirSync(dir, { withFileTypes: true }).map((e) =>
      e.isDirectory() ? newestSource(join(dir, e.name)) : statSync(join(dir, e.name)).mtimeMs,
    ),
  );
}

/** The prebuilt bundle, when it is there and not older than the sources; else a fresh bundle of the sources. */
export async function loadAssets(): Promise<{ assets: Assets; prebuilt: boolean }> {
  const prebuilt = ['studio.js', 'studio.css'].map((f) => join(DIST_DIR, f));
  if (prebuilt.every(existsSync) && Math.min(...prebuilt.map((f) => statSync(f).mtimeMs)) >= newestSource()) {
    return {
      assets: new Map(
        prebuilt.map((f) => [f.slice(f.lastIndexOf('/') + 1), { type: typeOf(f), body: readFileSync(f) }]),
      ),
      prebuilt: true,
    };
  }
  const files = await bundleUi();
  return { assets: new Map([...files].map(([name, body]) => [name, { type: typeOf(name), body }])), prebuilt: false };
}

/** The page: the bundle, and the per-process token the UI sends with every change (cross-site pages cannot read it). */
export function indexHtml(token: string, project: string): string {
  const escapeHtml = (s: string) => s.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="stepwise-token" content="${escapeHtml(token)}">
<title>Stepwise Studio · ${escapeHtml(project)}</title>
<link rel="stylesheet" href="/assets/studio.css">
<script type="module" src="/assets/studio.js"></script>
</head>
<body>
<div id="app"><p>Loading Stepwise Studio…</p></div>
</body>
</html>
`;
}
