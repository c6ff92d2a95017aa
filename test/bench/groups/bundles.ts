/** Lambda bundles: minified size and module initialisation per entry of the app. */
import { ENTRY_METADATA, WORKFLOW_DIR_METADATA } from '../../../src/cdk/metadata.ts';
import { synthProject } from '../../../src/local/cloud/synth.ts';
import { exampleEnv } from '../../examples/support/config.ts';
import { type BundleFigure, type LambdaBuild, measureBundles } from '../bundles.ts';
import type { BenchRun } from '../harness.ts';
import { ENV } from './shared.ts';

export async function bundles(bench: BenchRun): Promise<void> {
  const app = await synthProject(ENV);
  const { sdkTraces, bundleAwsSdk } = exampleEnv(ENV);
  // One bundle per entry and workflow folder: the functions of one workflow's steps share it.
  const builds = new Map<string, LambdaBuild>();
  for (const t of Object.values(app.templates))
    for (const r of Object.values(t.Resources ?? {})) {
      const entry = r.Metadata?.[ENTRY_METADATA];
      if (r.Type !== 'AWS::Lambda::Function' || typeof entry !== 'string') continue;
      const workflowDir = r.Metadata?.[WORKFLOW_DIR_METADATA] as string | undefined;
      builds.set(`${entry} ${workflowDir ?? ''}`, {
        entry,
        sdkTraces,
        bundleAwsSdk,
        ...(workflowDir && { workflowDir }),
      });
    }
  const figures = await measureBundles([...builds.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([, b]) => b));
  const show = (f: BundleFigure) =>
    `${f.entry}${f.workflowDir ? ` (${f.workflowDir})` : ''}${f.sdkTraces ? ', sdkTraces' : ''}${f.bundleAwsSdk ? ', bundleAwsSdk' : ''}: ${f.minifiedKB} KB, init ${f.initMs} ms`;
  for (const f of figures) process.stderr.write(`  ✓ bundle ${show(f)}\n`);
  // What the environment options trade: the largest bundle again with the X-Ray SDK, then with the AWS SDK the other
  // way. With the SDK bundled (the default), the second is the bundle as built before: the runtime's SDK.
  const largest = figures.reduce((a, b) => (b.minifiedKB > a.minifiedKB ? b : a));
  const options = await measureBundles([
    { ...largest, sdkTraces: !sdkTraces },
    { ...largest, bundleAwsSdk: !bundleAwsSdk },
  ]);
  for (const f of options) process.stderr.write(`  ✓ bundle ${show(f)}\n`);
  bench.figures.bundles = { sdkTraces, bundleAwsSdk, builds: figures, largestWithOtherOptions: options };
  // Cold start where it is spent: a fresh process importing the largest step bundle as deployed, against the same
  // bundle with the runtime's SDK loaded from node_modules, measured in this run.
  const runtimeSdk = bundleAwsSdk ? options[1]! : largest;
  const deployed = bundleAwsSdk ? largest : options[1]!;
  bench.target(
    'bundles.coldImportMs',
    `a fresh-process import of the largest step bundle as deployed (SDK bundled: ${bundleAwsSdk}), ms, at most 0.6× the same bundle with the runtime's SDK (${runtimeSdk.initMs} ms in this run)`,
    deployed.initMs,
    { max: Math.round(0.6 * runtimeSdk.initMs) },
  );
  bench.target(
    'bundles.largestMinifiedKB',
    `the largest Lambda bundle, minified, KB (every bundle under 1.5 MB; the ${ENV} config: sdkTraces ${sdkTraces}, bundleAwsSdk ${bundleAwsSdk})`,
    largest.minifiedKB,
    { max: 1536 },
  );
}
