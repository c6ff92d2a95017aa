import { mkdirSync, mkdtempSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { build, type Metafile } from 'esbuild';
import { celInBundle } from '../../src/cdk/constructs/bundle-cel.ts';
import { engineEntry, generateLambdaEntry } from '../../src/cdk/constructs/lambda-entry.ts';
import { type BundleOptions, bundleSettings, ESBUILD_DEFAULTS } from '../../src/cdk/constructs/stepwise-function.ts';
import { PACKAGE_ROOT, STATE_DIR as STEPWISE_DIR } from '../../src/core/paths.ts';

/** A function's bundle: what decides its content besides its entry. */
export interface LambdaBundleOptions extends BundleOptions {
  /** The workflow folder it ships with, relative to the project root. @default none */
  readonly workflowDir?: string;
}

/**
 * Bundle an engine entry the way StepwiseFunction does (ESM, node, minified, names kept, the
 * {@link bundleSettings} of `options`, and for a workflow folder the entry generated for it),
 * without source maps.
 */
export async function bundleLikeLambda(
  entry: string,
  outfile: string,
  options: LambdaBundleOptions = {},
): Promise<Metafile> {
  // What StepwiseFunction decides for the folder, unless the caller says.
  const workflowDir = options.workflowDir && join(PACKAGE_ROOT, options.workflowDir);
  const { define, external } = bundleSettings({ ...options, cel: options.cel ?? celInBundle(workflowDir) });
  const entryPoint = options.workflowDir
    ? generateLambdaEntry(entry, join(PACKAGE_ROOT, options.workflowDir), join(dirname(outfile), 'entries'))
    : engineEntry(entry);
  const result = await build({
    entryPoints: [entryPoint],
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
