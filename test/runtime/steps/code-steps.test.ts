/**
 * Code steps as the step handler runs them: the handler is the default export of the workflow's
 * `lambdas/workflows/<workflow>/steps/<handler>.ts`, found by its frontmatter `handler`, and may only route along
 * the step's declared edges. On 02-look-up of the fixture's case-desk workflow.
 */
import { describe, expect, it } from 'vitest';
import { DefinitionError, StepFailedError } from '../../../src/core/errors.ts';
import { getStep, loadWorkflow } from '../../../src/definitions/workflow/loader.ts';
import type { StepDefinition } from '../../../src/definitions/workflow/schema.ts';
import type { StepInput } from '../../../src/runtime/contracts/step.ts';
import { loadPlugin, resolvePlugin } from '../../../src/runtime/plugin.ts';
import { failure } from '../../support/failure.ts';
import { FIXTURE_STATEMACHINES } from '../../support/fixture-project.ts';
import { type fakeToolbox, previousState, runPluginStep, stepInput } from './fixtures.ts';

const plugin = await loadPlugin('case-desk', FIXTURE_STATEMACHINES);
const def = plugin.def;

const run = (step: StepDefinition, input: StepInput, results: Parameters<typeof fakeToolbox>[0] = {}) =>
  runPluginStep(plugin, step, input, { results });

describe('a code step (02-look-up)', () => {
  const step = getStep(def, '02-look-up');
  /** The input of step 02 after step 01 routed to it with `data`. */
  const after01 = (data: Record<string, unknown>) =>
    stepInput(step.name, { previous: previousState({ step: '01-read-request', next: step.name, data, count: 1 }) });

  it('fails permanently if a code step ever routes outside its declared edges', async () => {
    const narrowed = { ...step, next: ['03b-not-found', '04-hand-off'] };
    const error = await failure(
      run(narrowed, after01({ caseRef: 'C-10001' }), { lookup_case: { ref: 'C-10001', status: 'open' } }).result,
    );
    expect(error).toBeInstanceOf(StepFailedError);
    expect(error.message).toContain('chose "03a-open-case", not a declared edge');
  });

  it('is the default export of lambdas/workflows/<workflow>/steps/<handler>.ts', async () => {
    expect(Object.keys(plugin.codeSteps).sort()).toEqual(['hand-off', 'look-up']);
    expect(plugin.codeSteps['look-up']).toBe(
      (await import('../../fixtures/project/lambdas/workflows/case-desk/steps/look-up.ts')).default,
    );
  });

  it('names the missing module when a handler is unknown', async () => {
    const error = await failure(run({ ...step, handler: 'nope' }, after01({ caseRef: 'C-10001' })).result);
    expect(error).toBeInstanceOf(DefinitionError);
    expect(error.message).toContain('no code step "nope"');
    const loaded = loadWorkflow('case-desk', FIXTURE_STATEMACHINES);
    const broken = {
      ...loaded,
      steps: loaded.steps.map((s) => (s.name === step.name ? { ...s, handler: 'nope' } : s)),
    };
    const unresolved = await failure(resolvePlugin(broken));
    expect(unresolved).toBeInstanceOf(DefinitionError);
    expect(unresolved.message).toContain('no module test/fixtures/project/lambdas/workflows/case-desk/steps/nope.ts');
  });
});
