import { join } from 'node:path';
import { build, type Metafile } from 'esbuild';
import { ESBUILD_DEFAULTS } from '../../infra/constructs/stepwise-function.ts';
import { PROJECT_ROOT } from '../../lambdas/lib/workflow/loader.ts';

/** Bundle a project entry the way StepwiseFunction does (ESM, node, minified, names kept, the SDK inside), without source maps. */
export async function bundleLikeLambda(entry: string, outfile: string): Promise<Metafile> {
  const result = await build({
    entryPoints: [join(PROJECT_ROOT, entry)],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: ESBUILD_DEFAULTS.target,
    minify: ESBUILD_DEFAULTS.minify,
    keepNames: ESBUILD_DEFAULTS.keepNames,
    mainFields: ['module', 'main'],
    banner: { js: "import { createRequire } from 'module'; const require = createRequire(import.meta.url);" },
    metafile: true,
    logLevel: 'silent',
  });
  return result.metafile;
}
