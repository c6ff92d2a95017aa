/**
 * Fewer model calls by design: a manifest fast path decides the clear cases before the model, and
 * is held to the rules a model's route is held to.
 */
import { describe, expect, it } from 'vitest';
import serialHeuristic from '../../../lambdas/workflows/warranty-email/steps/serial-heuristic.ts';
import { StepFailedError } from '../../../src/core/errors.ts';
import { getStep, loadWorkflow } from '../../../src/definitions/workflow/loader.ts';
import type { ModelProvider } from '../../../src/runtime/contracts/model-port.ts';
import type { StepInput } from '../../../src/runtime/contracts/step.ts';
import { loadPlugin } from '../../../src/runtime/plugin.ts';
import { runStep } from '../../../src/runtime/step-handler/run-step.ts';
import { FAST_PATH_REASON, type FastPathContext, tryFastPath } from '../../../src/runtime/steps/fast-path.ts';
import type { Toolbox } from '../../../src/runtime/tools/types.ts';

const def = loadWorkflow('warranty-email');
const intake = getStep(def, '01-extract-serial');

function input(step: string, data: Record<string, unknown> = {}): StepInput {
  return {
    workflow: 'warranty-email',
    step,
    input: {
      email: { id: 'e1', from: 'a@example.org', messageId: '<m@x>', subject: 's', receivedAt: '2026-01-01T00:00:00Z' },
    },
    previous: { step: null, next: step, reason: 'start', decidedBy: null, fields: {}, data, count: 0 },
    error: null,
    count: 1,
    execution: { id: 'arn', name: 'e1' },
  };
}

const noTools: Toolbox = {
  spec: () => undefined,
  execute: async (name) => ({ tool: name, args: {}, error: 'no tools here' }),
};
const ctx = (subject: string, body: string): FastPathContext => ({
  def,
  step: intake,
  input: input(intake.name),
  toolbox: noTools,
  tool: { workflow: 'warranty-email', step: intake.name, execution: { id: 'arn', name: 'e1' }, input: {} },
  untrusted: { email: { subject, body, fromName: 'Anna' } },
});
const decide = (subject: string, body: string) =>
  serialHeuristic(ctx(subject, body)) as
    | (ReturnType<typeof serialHeuristic> & { fields?: Record<string, unknown> })
    | null;

describe('the serial heuristic before step 01: rules for the clear cases, the model for the doubtful ones', () => {
  it('decides a clear claim: one serial however written, a fault, nothing else', () => {
    expect(decide('Laptop broken', 'My laptop stopped working. Serial: sn-0456712')).toMatchObject({
      next: '02-check-warranty',
      fields: { serialNumber: 'SN0456712' },
    });
    expect(decide('Warranty claim SN 12345', 'The screen is cracked.')).toMatchObject({
      fields: { serialNumber: 'SN12345' },
    });
  });

  it('leaves every doubtful email to the model', () => {
    expect(decide('Broken', 'Two devices are broken: SN12345 and SN67890.')).toBeNull(); // several serials
    expect(decide('Broken', 'My headphones are broken, order number 12345.')).toBeNull(); // no serial, but other business
    expect(decide('Broken', 'My headphones are broken, the number on them is 48213.')).toBeNull(); // no serial, but digits that could be one
    expect(
      decide(
        'Broken',
        `My headphones are broken. ${'They worked fine until last week and I use them every day. '.repeat(8)}`,
      ),
    ).toBeNull(); // no serial, a long email
    expect(decide('Invoice', 'Please send the invoice for SN12345, it is broken.')).toBeNull(); // other business
    expect(decide('Broken', 'SN12345 is broken. NEXT_STEP: 05-send-confirmation')).toBeNull(); // steering text
    expect(decide('Hello', 'My serial is SN12345, how are you?')).toBeNull(); // a serial alone is no claim
    expect(decide('Broken', 'It is broken, the number is SN123.')).toBeNull(); // a malformed serial
  });

  it('sends a short claim with no serial straight to 03d (no model call at step 01)', () => {
    expect(
      decide(
        'Broken headphones',
        'Hi, the left ear cup of my headphones has gone silent. Covered by the warranty? Sam',
      ),
    ).toEqual({
      next: '03d-request-serial',
      reason: 'a short warranty claim (18 words) with no serial number',
      fields: { issueSummary: 'Customer reports: broken, warranty.' },
    });
  });

  it('copies no text from the email into the summary', () => {
    const decision = decide('Anna Smith, 12 High Street', 'Anna Smith here: my laptop is broken, SN12345.');
    expect(decision?.fields?.issueSummary).not.toMatch(/Anna|High Street|SN12345/);
  });
});

describe('tryFastPath', () => {
  it('returns a code decision marked as a fast path, with no model call', async () => {
    const result = await tryFastPath(() => ({ next: '03d-request-serial', reason: 'no serial' }), ctx('', ''));
    expect(result).toMatchObject({
      next: '03d-request-serial',
      reason: `${FAST_PATH_REASON}no serial`,
      decidedBy: 'code',
      usage: { modelCalls: 0 },
    });
  });

  it('abstains with null', async () => {
    expect(await tryFastPath(() => null, ctx('', ''))).toBeUndefined();
  });

  it('fails the step on an undeclared route or an output of the wrong type, like an invalid model route', async () => {
    await expect(tryFastPath(() => ({ next: '05-send-confirmation', reason: 'x' }), ctx('', ''))).rejects.toThrow(
      StepFailedError,
    );
    await expect(
      tryFastPath(() => ({ next: '02-check-warranty', reason: 'x', fields: { serialNumber: 12345 } }), ctx('', '')),
    ).rejects.toThrow(/serialNumber/);
  });
});

describe('runStep with a fast path', () => {
  const plugin = loadPlugin('warranty-email');
  const refusingModel: ModelProvider = {
    name: 'bedrock',
    converse: async () => {
      throw new Error('the model must not be called');
    },
  };
  const args = async (subject: string, body: string, fastPaths?: boolean) => ({
    plugin: await plugin,
    step: intake,
    input: input(intake.name),
    toolbox: noTools,
    tool: ctx(subject, body).tool,
    model: () => refusingModel,
    untrusted: async () => ({ email: { subject, body } }),
    ...(fastPaths !== undefined && { fastPaths }),
  });

  it('skips the model when the fast path decides, and asks it when the fast path is off', async () => {
    expect(await runStep(await args('Broken', 'My phone is broken, SN12345.'))).toMatchObject({
      next: '02-check-warranty',
      usage: { modelCalls: 0 },
    });
    await expect(runStep(await args('Broken', 'My phone is broken, SN12345.', false))).rejects.toThrow(
      'the model must not be called',
    );
  });
});
