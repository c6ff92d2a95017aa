/**
 * Fewer model calls by design: a manifest fast path decides the clear cases before the model, and
 * is held to the rules a model's route is held to. On 01-read-request of the fixture's case-desk workflow, whose fast
 * path routes one case reference with an issue word to the lookup.
 */
import { describe, expect, it } from 'vitest';
import { StepFailedError } from '../../../src/core/errors.ts';
import { getStep } from '../../../src/definitions/workflow/loader.ts';
import type { ModelProvider } from '../../../src/runtime/contracts/model-port.ts';
import { loadPlugin } from '../../../src/runtime/plugin.ts';
import { runStep } from '../../../src/runtime/step-handler/run-step.ts';
import { FAST_PATH_REASON, tryFastPath } from '../../../src/runtime/steps/fast-path.ts';
import { FIXTURE_STATEMACHINES } from '../../support/fixture-project.ts';
import { fastPathContext } from './fixtures.ts';

const plugin = await loadPlugin('case-desk', FIXTURE_STATEMACHINES);
const intake = getStep(plugin.def, '01-read-request');
const ctx = (subject: string, body: string) => fastPathContext(plugin.def, intake.name, { subject, body });

describe('tryFastPath', () => {
  it('returns a code decision marked as a fast path, with no model call', async () => {
    const result = await tryFastPath(() => ({ next: '03c-ask-ref', reason: 'no reference' }), ctx('', ''));
    expect(result).toMatchObject({
      next: '03c-ask-ref',
      reason: `${FAST_PATH_REASON}no reference`,
      decidedBy: 'code',
      usage: { modelCalls: 0 },
    });
  });

  it('abstains with null', async () => {
    expect(await tryFastPath(() => null, ctx('', ''))).toBeUndefined();
  });

  it('fails the step on an undeclared route or an output of the wrong type, like an invalid model route', async () => {
    await expect(tryFastPath(() => ({ next: '05-confirm', reason: 'x' }), ctx('', ''))).rejects.toThrow(
      StepFailedError,
    );
    await expect(
      tryFastPath(() => ({ next: '02-look-up', reason: 'x', fields: { caseRef: 10001 } }), ctx('', '')),
    ).rejects.toThrow(/caseRef/);
  });
});

describe('runStep with a fast path', () => {
  const refusingModel: ModelProvider = {
    name: 'bedrock',
    converse: async () => {
      throw new Error('the model must not be called');
    },
  };
  const args = (subject: string, body: string, fastPaths?: boolean) => {
    const { input, toolbox, tool } = ctx(subject, body);
    return {
      plugin,
      step: intake,
      input,
      toolbox,
      tool,
      model: () => refusingModel,
      untrusted: async () => ({ email: { subject, body } }),
      ...(fastPaths !== undefined && { fastPaths }),
    };
  };

  it('skips the model when the fast path decides, and asks it when the fast path is off', async () => {
    expect(await runStep(args('Broken', 'My lamp is broken, case C-10001.'))).toMatchObject({
      next: '02-look-up',
      fields: { caseRef: 'C-10001' },
      usage: { modelCalls: 0 },
    });
    await expect(runStep(args('Broken', 'My lamp is broken, case C-10001.', false))).rejects.toThrow(
      'the model must not be called',
    );
  });
});
