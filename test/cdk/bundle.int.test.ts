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
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { celInBundle } from '../../src/cdk/constructs/bundle-cel.ts';
import * as source from '../../src/core/errors.ts';
import { PROJECT_ROOT } from '../../src/core/paths.ts';
import type { StepInput, StepOutput } from '../../src/runtime/contracts/step.ts';
import { memoryEventLog } from '../../src/runtime/event-log.ts';
import { bundleLikeLambda, bundleOutDir, type LambdaBundleOptions } from '../support/bundle.ts';

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

const WARRANTY = { workflowDir: 'statemachines/warranty-email' };

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
    const { module } = await bundle('runtime/step-handler/handler.ts', 'step', WARRANTY);
    const error = await module
      .createHandler({ WORKFLOW: 'warranty-email', STEP: '01-extract-serial' })({ not: 'a step input' })
      .catch((e: Error) => e);
    expect(error.name).toBe('InvalidInputError');
  });

  it('the lifecycle Persist bundle throws errors by their names', async () => {
    const { module } = await bundle('runtime/lifecycle/handlers/persist.ts', 'persist', {
      workflowDir: 'statemachines/lead-lifecycle',
    });
    const error = await module
      .createHandler({ LIFECYCLE_TABLE: 'Leads' })({ not: 'a persist input' })
      .catch((e: Error) => e);
    expect(error.name).toBe('InvalidInputError');
  });
});

describe('a step bundle', () => {
  it('holds its workflow code only, no YAML parser, the AWS SDK clients it calls and the X-Ray SDK out', async () => {
    const { has } = await bundle('runtime/step-handler/handler.ts', 'warranty-contents', WARRANTY);
    expect(has('lambdas/workflows/warranty-email/')).toBe(true);
    for (const other of ['tool-loop', 'turn-pipeline', 'investigation'])
      expect(has(`lambdas/workflows/${other}/`), other).toBe(false);
    expect(has('node_modules/yaml/')).toBe(false);
    // Bundled by default: importing it from the bundle is the faster cold start (docs/internals/bundles.md).
    expect(has('node_modules/@aws-sdk/client-dynamodb/')).toBe(true);
    expect(has('node_modules/aws-xray-sdk-core/')).toBe(false);
    expect(has('node_modules/tsx/')).toBe(false);
  });

  it('takes the X-Ray SDK with sdkTraces and leaves the AWS SDK to the runtime with bundleAwsSdk: false', async () => {
    const traced = await bundle('runtime/step-handler/handler.ts', 'warranty-traced', {
      ...WARRANTY,
      sdkTraces: true,
      bundleAwsSdk: false,
    });
    expect(traced.has('node_modules/aws-xray-sdk-core/')).toBe(true);
    expect(traced.has('node_modules/@aws-sdk/')).toBe(false);
  });

  it('runs a step from its compiled definitions (instructions, offline rules) and refuses another workflow', async () => {
    const { module } = await bundle('runtime/step-handler/handler.ts', 'warranty-run', WARRANTY);
    const email = {
      id: 'e1',
      messageId: '<m1@x>',
      from: 'anna@example.com',
      fromName: 'Anna',
      to: ['claims@x'],
      subject: 'Broken laptop',
      receivedAt: '2026-02-02T10:00:00.000Z',
      bodyChars: 60,
    };
    const input: StepInput = {
      workflow: 'warranty-email',
      step: '01-extract-serial',
      input: { email },
      previous: {
        step: null,
        next: '01-extract-serial',
        reason: 'start',
        decidedBy: null,
        fields: {},
        data: {},
        count: 0,
      },
      error: null,
      count: 1,
      execution: { id: 'arn', name: 'exec-1' },
    };
    const env = {
      MODEL_PROVIDER: 'offline',
      FAST_PATHS: 'off',
      STATEMACHINES_DIR: join(PROJECT_ROOT, 'statemachines'),
      POWERTOOLS_LOG_LEVEL: 'SILENT',
    };
    const services = {
      events: memoryEventLog(),
      emails: {
        get: async () => ({ email, body: 'My laptop SN12345 does not turn on since yesterday. It is under warranty.' }),
      },
    };
    const output = (await module.createHandler(env, services)(input)) as StepOutput;
    expect(output).toMatchObject({
      next: '02-check-warranty',
      decidedBy: 'offline',
      fields: { serialNumber: 'SN12345' },
    });

    const elsewhere = await module
      .createHandler(
        env,
        services,
      )({ ...input, workflow: 'tool-loop', step: '01-plan' })
      .catch((e: Error) => e);
    expect(elsewhere.message).toMatch(
      /statemachines\/tool-loop\/workflow.yaml: \(file\): not in the definitions compiled into this bundle/,
    );
  });
});

describe('the CEL evaluator in a bundle', () => {
  const CEL = 'node_modules/@marcbachmann/cel-js/';
  const rules = { checks: [{ id: 'no-money', type: 'expression', expression: 'size(amounts) == 0' }] };
  const ctx = { step: { instruction: '', tools: [] }, internalNames: [], scope: { data: {}, input: {} }, args: {} };

  it('is decided at synth: a guard rule of type expression, or workflow code that compiles one', () => {
    expect(celInBundle(join(PROJECT_ROOT, 'statemachines/warranty-email'))).toBe(true);
    expect(celInBundle(join(PROJECT_ROOT, 'statemachines/turn-pipeline'))).toBe(true);
    expect(celInBundle(join(PROJECT_ROOT, 'statemachines/tool-loop'))).toBe(false);
    expect(celInBundle(join(PROJECT_ROOT, 'statemachines/lead-lifecycle'))).toBe(false);
    expect(celInBundle(undefined)).toBe(false);
  });

  it('stays out of the step bundle of a workflow with no expression, and comes with a guard rule of type expression', async () => {
    const plain = await bundle('runtime/step-handler/handler.ts', 'tool-loop-cel', {
      workflowDir: 'statemachines/tool-loop',
    });
    expect(plain.has(CEL)).toBe(false);
    const guarded = await bundle('runtime/step-handler/handler.ts', 'warranty-cel', WARRANTY);
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
    const { module } = await bundle('runtime/step-handler/handler.ts', 'warranty-no-cel', { ...WARRANTY, cel: false });
    const asked: unknown[] = [];
    const model = {
      name: 'bedrock',
      converse: async (r: unknown) => (asked.push(r), Promise.reject(new Error('unused'))),
    };
    const email = {
      id: 'e2',
      messageId: '<m2@x>',
      from: 'a@example.com',
      fromName: 'A',
      to: ['claims@x'],
      subject: 'S',
      receivedAt: '2026-02-02T10:00:00.000Z',
      bodyChars: 4,
    };
    const input: StepInput = {
      workflow: 'warranty-email',
      step: '03b-device-not-found',
      input: { email },
      previous: {
        step: '02-check-warranty',
        next: '03b-device-not-found',
        reason: 'r',
        decidedBy: 'model',
        fields: {},
        data: {},
        count: 2,
      },
      error: null,
      count: 3,
      execution: { id: 'arn', name: 'exec-2' },
    };
    const env = {
      STATEMACHINES_DIR: join(PROJECT_ROOT, 'statemachines'),
      POWERTOOLS_LOG_LEVEL: 'SILENT',
      FAST_PATHS: 'off',
    };
    const services = { model, events: memoryEventLog(), emails: { get: async () => ({ email, body: 'Body' }) } };
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
