/**
 * Every Lambda entry of the app bundled as `StepwiseFunction` bundles it (ESM, minified, names
 * kept, the AWS SDK left to the runtime), measured: minified size, the largest packages in it, and
 * module initialisation time (importing the bundle in a fresh Node process, the SDK clients it
 * imports included, as a cold start loads them from the runtime).
 */
import { execFileSync } from 'node:child_process';
import { rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { bundleLikeLambda, bundleOutDir, type LambdaBundleOptions } from '../support/bundle.ts';

/** A function's bundle: its entry and what else decides its content. */
export interface LambdaBuild extends LambdaBundleOptions {
  entry: string;
}

export interface BundleFigure extends LambdaBuild {
  minifiedKB: number;
  /** The five largest packages (or project folders) in the bundle, KB of output. */
  largest: Record<string, number>;
  /** Median of {@link INIT_SAMPLES} imports, each in a fresh Node process. */
  initMs: number;
}

const INIT_SAMPLES = 5;

const packageOf = (path: string) => {
  const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path);
  return m ? m[1]! : path.split('/').slice(0, 2).join('/');
};

/** Bundle and measure each build (without source maps: they are a separate file). */
export async function measureBundles(builds: readonly LambdaBuild[]): Promise<BundleFigure[]> {
  const out = bundleOutDir('bench');
  try {
    const figures: BundleFigure[] = [];
    for (const [i, build] of builds.entries()) {
      const outfile = join(out, `${i}-${build.entry.replace(/[/.]/g, '_')}.mjs`);
      const metafile = await bundleLikeLambda(build.entry, outfile, build);
      const bytes: Record<string, number> = {};
      for (const output of Object.values(metafile.outputs))
        for (const [path, input] of Object.entries(output.inputs))
          bytes[packageOf(path)] = (bytes[packageOf(path)] ?? 0) + input.bytesInOutput;
      const largest = Object.fromEntries(
        Object.entries(bytes)
          .sort((a, b) => b[1] - a[1])
          .slice(0, 5)
          .map(([k, v]) => [k, Math.round(v / 102.4) / 10]),
      );
      const probe = join(out, 'probe.mjs');
      writeFileSync(
        probe,
        `const t = performance.now(); await import(${JSON.stringify(pathToFileURL(outfile).href)}); process.stdout.write(String(performance.now() - t));`,
      );
      // The median of a few cold imports: one process start on a shared machine is mostly noise.
      const samples = Array.from({ length: INIT_SAMPLES }, () =>
        Number(
          execFileSync(process.execPath, [probe], {
            encoding: 'utf8',
            env: { ...process.env, AWS_REGION: 'us-east-1' },
          }),
        ),
      );
      const initMs = samples.sort((a, b) => a - b)[Math.floor(INIT_SAMPLES / 2)]!;
      figures.push({
        ...build,
        minifiedKB: Math.round(statSync(outfile).size / 102.4) / 10,
        largest,
        initMs: Math.round(initMs * 10) / 10,
      });
    }
    return figures;
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}
