/**
 * The deployed code is a minified bundle; the local runtime runs the source. What the bundle holds
 * and how it behaves are what the Lambda gets:
 * - error names survive bundling: Lambda reports a thrown error's class name as `errorType`, and the
 *   ASL's Retry/Catch match it (a renamed `ModelThrottledError` would never be retried in AWS);
 * - a step bundle holds one workflow's code and its definitions compiled to JSON, and runs from
 *   them: no YAML parser, no other workflow, no AWS SDK (the runtime's) and no X-Ray SDK unless the
 *   environment asks for them;
 * - the CEL evaluator (cel-js) only when the workflow compiles an expression; a bundle without it
 *   refuses to compile one (ExpressionsNotBundledError) rather than pass a check.
 */
import { rmSync } from 'node:fs';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { celInBundle } from '../../src/cdk/constructs/bundle-cel.ts';
import * as source from '../../src/core/errors.ts';
import { PACKAGE_ROOT } from '../../src/core/paths.ts';
import type { StepOutput } from '../../src/runtime/contracts/step.ts';
import { memoryEventLog } from '../../src/runtime/event-log.ts';
import { previousState, stepInput, storedEmail } from '../runtime/steps/fixtures.ts';
import { bundleLikeLambda, bundleOutDir, type LambdaBundleOptions } from '../support/bundle.ts';
import { FIXTURE_PROJECT, FIXTURE_STATEMACHINES } from '../support/fixture-project.ts';

const out = bundleOutDir('bundle-test');
afterAll(() => rmSync(out, { recursive: true, force: true }));

/** Bundle an entry the way StepwiseFunction does; its module and the packages and project folders in it. */
async function bundle(entry: string, name: string, options: LambdaBundleOptions = {}) {
  const outfile = join(out, `${name}.mjs`);
  const metafile = await bundleLikeLambda(entry, outfile, options);
  const inputs = Object.keys(metafile.inputs);
  const has = (path: string) => inputs.some((i) => i.startsWith(path));
  return { module: (await import(pathToFileURL(outfile).href)) as Record<string, any>, has };
}

/** The fixture project's folder `name` (a workflow or a lifecycle), as a bundle's `workflowDir`. */
const fixtureDir = (name: string) => ({ workflowDir: relative(PACKAGE_ROOT, join(FIXTURE_STATEMACHINES, name)) });
/** Where the fixture project's code is, as the bundle's inputs name it. */
const FIXTURE_CODE = `${relative(PACKAGE_ROOT, FIXTURE_PROJECT)}/lambdas/workflows`;
// case-desk: an email workflow whose reply guard has a rule of type expression (CEL).
const DESK = fixtureDir('case-desk');
const env = { STATEMACHINES_DIR: FIXTURE_STATEMACHINES, POWERTOOLS_LOG_LEVEL: 'SILENT', FAST_PATHS: 'off' };

describe('bundled with the production esbuild options', () => {
  it('every typed error keeps the name the ASL matches', async () => {
    const { module: bundled } = await bundle('core/errors.ts', 'errors');
    const classes = Object.entries(source).filter(([, v]) => typeof v === 'function' && /Error$/.test(v.name));
    expect(classes.length).toBeGreaterThan(10);
    for (const [exported] of classes) {
      const Bundled = bundled[exported] as new (...args: any[]) => Error;
      expect(new Bundled('x', 'y', 'z').name, exported).toBe(exported);
    }
  });

  it('the step handler bundle throws errors by their names', async () => {
    const { module } = await bundle('runtime/step-handler/handler.ts', 'step', DESK);
    const error = await module
      .createHandler({ WORKFLOW: 'case-desk', STEP: '01-read-request' })({ not: 'a step input' })
      .catch((e: Error) => e);
    expect(error.name).toBe('InvalidInputError');
  });

  it('the lifecycle Persist bundle throws errors by their names', async () => {
    const { module } = await bundle('runtime/lifecycle/handlers/persist.ts', 'persist', fixtureDir('member-journey'));
    const error = await module
      .createHandler({ LIFECYCLE_TABLE: 'Members' })({ not: 'a persist input' })
      .catch((e: Error) => e);
    expect(error.name).toBe('InvalidInputError');
  });
});

describe('a step bundle', () => {
  it('holds its workflow code only, no YAML parser, the AWS SDK clients it calls and the X-Ray SDK out', async () => {
    const { has } = await bundle('runtime/step-handler/handler.ts', 'desk-contents', DESK);
    expect(has(`${FIXTURE_CODE}/case-desk/`)).toBe(true);
    for (const other of ['consensus-pick', 'checkpoint-review', 'reply-wait'])
      expect(has(`${FIXTURE_CODE}/${other}/`), other).toBe(false);
    expect(has('node_modules/yaml/')).toBe(false);
    // Bundled by default: importing it from the bundle is the faster cold start (docs/internals/bundles.md).
    expect(has('node_modules/@aws-sdk/client-dynamodb/')).toBe(true);
    expect(has('node_modules/aws-xray-sdk-core/')).toBe(false);
    expect(has('node_modules/tsx/')).toBe(false);
  });

  it('takes the X-Ray SDK with sdkTraces and leaves the AWS SDK to the runtime with bundleAwsSdk: false', async () => {
    const traced = await bundle('runtime/step-handler/handler.ts', 'desk-traced', {
      ...DESK,
      sdkTraces: true,
      bundleAwsSdk: false,
    });
    expect(traced.has('node_modules/aws-xray-sdk-core/')).toBe(true);
    expect(traced.has('node_modules/@aws-sdk/')).toBe(false);
  });

  it('runs a step from its compiled definitions (instructions, offline rules) and refuses another workflow', async () => {
    const { module } = await bundle('runtime/step-handler/handler.ts', 'desk-run', DESK);
    const stored = storedEmail('My desk lamp from case c-10001 is broken again since yesterday.');
    const input = stepInput('01-read-request', { input: { email: stored.email } });
    const services = { events: memoryEventLog(), emails: { get: async () => stored } };
    const offline = { ...env, MODEL_PROVIDER: 'offline' };
    const output = (await module.createHandler(offline, services)(input)) as StepOutput;
    expect(output).toMatchObject({ next: '02-look-up', decidedBy: 'offline', fields: { caseRef: 'C-10001' } });

    const elsewhere = await module
      .createHandler(
        offline,
        services,
      )({ ...input, workflow: 'consensus-pick', step: '01-start' })
      .catch((e: Error) => e);
    expect(elsewhere.message).toMatch(
      /statemachines\/consensus-pick\/workflow.yaml: \(file\): not in the definitions compiled into this bundle/,
    );
  });
});

describe('the CEL evaluator in a bundle', () => {
  const CEL = 'node_modules/@marcbachmann/cel-js/';
  const rules = { checks: [{ id: 'no-money', type: 'expression', expression: 'size(amounts) == 0' }] };
  const ctx = { step: { instruction: '', tools: [] }, internalNames: [], scope: { data: {}, input: {} }, args: {} };

  it('is decided at synth: a guard rule of type expression, or workflow code that compiles one', () => {
    const cel = (name: string) => celInBundle(join(FIXTURE_STATEMACHINES, name));
    expect(cel('case-desk')).toBe(true);
    expect(cel('checkpoint-review')).toBe(true);
    expect(cel('consensus-pick')).toBe(false);
    expect(cel('member-journey')).toBe(false);
    expect(celInBundle(undefined)).toBe(false);
  });

  it('stays out of the step bundle of a workflow with no expression, and comes with a guard rule of type expression', async () => {
    const plain = await bundle('runtime/step-handler/handler.ts', 'pick-cel', fixtureDir('consensus-pick'));
    expect(plain.has(CEL)).toBe(false);
    const guarded = await bundle('runtime/step-handler/handler.ts', 'desk-cel', DESK);
    expect(guarded.has(CEL)).toBe(true);
  });

  it('evaluates the guard check when bundled, and refuses it by name when left out', async () => {
    const withCel = await bundle('runtime/steps/guard.ts', 'guard-cel', { cel: true });
    expect(withCel.module.checkText('We will refund you $50.', rules, ctx)).toEqual([
      expect.objectContaining({ check: 'no-money', passed: false, found: ['size(amounts) == 0'] }),
    ]);
    expect(withCel.module.checkText('Your repair is on its way.', rules, ctx)).toEqual([
      expect.objectContaining({ check: 'no-money', passed: true }),
    ]);
    const without = await bundle('runtime/steps/guard.ts', 'guard-no-cel', { cel: false });
    expect(without.has(CEL)).toBe(false);
    let thrown: Error | undefined;
    try {
      without.module.checkText('Your repair is on its way.', rules, ctx);
    } catch (e) {
      thrown = e as Error;
    }
    expect(thrown?.name).toBe('ExpressionsNotBundledError');
    expect(thrown?.message).toMatch(/size\(amounts\) == 0: this function was bundled without the CEL evaluator/);
  });

  it('a guarded step bundled without it fails before its model is asked', async () => {
    const { module } = await bundle('runtime/step-handler/handler.ts', 'desk-no-cel', { ...DESK, cel: false });
    const asked: unknown[] = [];
    const model = {
      name: 'bedrock',
      converse: async (r: unknown) => (asked.push(r), Promise.reject(new Error('unused'))),
    };
    const stored = storedEmail('Body');
    const input = stepInput('03b-not-found', {
      input: { email: stored.email },
      previous: previousState({ step: '02-look-up', next: '03b-not-found', reason: 'r', decidedBy: 'model', count: 2 }),
    });
    const services = { model, events: memoryEventLog(), emails: { get: async () => stored } };
    const error = await module
      .createHandler(
        env,
        services,
      )(input)
      .catch((e: Error) => e);
    expect(error.name).toBe('ExpressionsNotBundledError');
    expect(asked).toEqual([]);
  });
});
