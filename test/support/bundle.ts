import { mkdirSync, mkdtempSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { build, type Metafile } from 'esbuild';
import { ESBUILD_DEFAULTS, bundleSettings, type BundleOptions } from '../../infra/constructs/stepwise-function.ts';
import { PROJECT_ROOT, STEPWISE_DIR } from '../../lambdas/lib/workflow/loader.ts';

/**
 * Bundle a project entry the way StepwiseFunction does (ESM, node, minified, names kept, the
 * {@link bundleSettings} of `options`, whose `workflowDir` is relative to the project root here),
 * without source maps.
 */
export async function bundleLikeLambda(entry: string, outfile: string, options: BundleOptions = {}): Promise<Metafile> {
  const { define, external } = bundleSettings(
    { ...options, ...(options.workflowDir && { workflowDir: join(PROJECT_ROOT, options.workflowDir) }) },
    dirname(outfile),
  );
  const result = await build({
    entryPoints: [join(PROJECT_ROOT, entry)],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: ESBUILD_DEFAULTS.target,
    minify: ESBUILD_DEFAULTS.minify,
    keepNames: ESBUILD_DEFAULTS.keepNames,
    external,
    define,
    mainFields: ['module', 'main'],
    banner: { js: "import { createRequire } from 'module'; const require = createRequire(import.meta.url);" },
    metafile: true,
    logLevel: 'silent',
  });
  return result.metafile;
}

/**
 * A fresh folder for bundles inside the project: a bundle imports the AWS SDK it leaves out from
 * `node_modules`, as a Lambda imports the runtime's.
 */
export function bundleOutDir(prefix: string): string {
  const parent = join(STEPWISE_DIR, 'bundles');
  mkdirSync(parent, { recursive: true });
  return mkdtempSync(join(parent, `${prefix}-`));
}
