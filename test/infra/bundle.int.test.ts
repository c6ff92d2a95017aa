/**
 * The deployed code is minified; the local runtime runs the source. Error names must survive
 * bundling: Lambda reports a thrown error's class name as `errorType`, and the ASL's Retry/Catch
 * match it (a renamed `ModelThrottledError` would never be retried in AWS).
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import * as source from '../../lambdas/lib/errors.ts';
import { bundleLikeLambda, bundleOutDir } from '../support/bundle.ts';

const out = bundleOutDir('bundle-test');
afterAll(() => rmSync(out, { recursive: true, force: true }));

/** Bundle an entry the way StepwiseFunction does (ESM, node, minified, names kept) and import it. */
async function bundle(entry: string, name: string): Promise<Record<string, any>> {
  const outfile = join(out, `${name}.mjs`);
  await bundleLikeLambda(entry, outfile);
  return import(pathToFileURL(outfile).href);
}

describe('bundled with the production esbuild options', () => {
  it('every typed error keeps the name the ASL matches', async () => {
    const bundled = await bundle('lambdas/lib/errors.ts', 'errors');
    const classes = Object.entries(source).filter(([, v]) => typeof v === 'function' && /Error$/.test(v.name));
    expect(classes.length).toBeGreaterThan(10);
    for (const [exported] of classes) {
      const Bundled = bundled[exported] as new (...args: any[]) => Error;
      expect(new Bundled('x', 'y', 'z').name, exported).toBe(exported);
    }
  });

  it('the step handler bundle throws errors by their names', async () => {
    const { createHandler } = await bundle('lambdas/handlers/step.ts', 'step');
    const error = await createHandler({ WORKFLOW: 'warranty-email', STEP: '01-extract-serial' })({ not: 'a step input' }).catch((e: Error) => e);
    expect(error.name).toBe('InvalidInputError');
  });

  it('the lifecycle Persist bundle throws errors by their names', async () => {
    const { createHandler } = await bundle('lambdas/lifecycle/handlers/persist.ts', 'persist');
    const error = await createHandler({ LEADS_TABLE: 'Leads' })({ not: 'a persist input' }).catch((e: Error) => e);
    expect(error.name).toBe('InvalidInputError');
  });
});
