/**
 * Routing without wasted model calls: a single-edge step routes on once its tools did their job;
 * a step with several edges still needs the model's decision. The step's temperature is passed on.
 * On the steps of the fixture's case-desk workflow.
 */
import { describe, expect, it } from 'vitest';
import { getStep, loadWorkflow } from '../../../src/definitions/workflow/loader.ts';
import type { StepDefinition } from '../../../src/definitions/workflow/schema.ts';
import type { ModelProvider } from '../../../src/runtime/contracts/model-port.ts';
import { ModelDeadline } from '../../../src/runtime/models/deadline.ts';
import { runLlmStep } from '../../../src/runtime/steps/runner.ts';
import type { Toolbox } from '../../../src/runtime/tools/types.ts';
import { fakeToolbox, previousState, scriptedModel, stepInput, toolUse } from './fixtures.ts';

const def = loadWorkflow('case-desk');

const model = (turns: Parameters<typeof scriptedModel>[0]) => {
  const { model: provider, requests } = scriptedModel(turns);
  return { provider, requests };
};
const toolbox = (results: Parameters<typeof fakeToolbox>[0]) => fakeToolbox(results).toolbox;
const use = (name: string, input: unknown, id = name) => toolUse(name, input, id);

const run = (step: StepDefinition, provider: ModelProvider, box: Toolbox, deadline?: ModelDeadline) =>
  runLlmStep({
    def,
    step,
    input: stepInput(step.name, { previous: previousState({ next: step.name, data: { caseId: 'CASE-1' } }) }),
    untrusted: undefined,
    untrustedFields: { input: ['email'], data: [] },
    model: provider,
    toolbox: box,
    deadline,
  });

describe('single-edge routing', () => {
  it('a reply step routes to its one edge after the required reply succeeded: one model call', async () => {
    const { provider, requests } = model([[use('send_email', { body: 'Hello' })]]);
    const result = await run(getStep(def, '05-confirm'), provider, toolbox({ send_email: { sent: true } }));
    expect(requests).toHaveLength(1);
    expect(result).toMatchObject({
      next: 'DONE',
      decidedBy: 'model',
      reply: 'Hello',
      usage: { modelCalls: 1, inputTokens: 100 },
    });
  });

  it('without requires, routes on after a turn whose calls all succeeded (03a: one call)', async () => {
    const { provider, requests } = model([[use('open_case', { summary: 'Broken.' })]]);
    const result = await run(
      getStep(def, '03a-open-case'),
      provider,
      toolbox({ open_case: { caseId: 'CASE-9', status: 'filed' } }),
    );
    expect(requests).toHaveLength(1);
    expect(result).toMatchObject({ next: '05-confirm', usage: { modelCalls: 1 } });
  });

  it('gives the model another turn when a call failed', async () => {
    const { provider, requests } = model([
      [use('open_case', { summary: 'Broken.' }, 'a')],
      [use('route', { next: '05-confirm', reason: 'Case not opened: store down.' }, 'b')],
    ]);
    const result = await run(
      getStep(def, '03a-open-case'),
      provider,
      toolbox({ open_case: { error: 'CaseStoreError: taken' } }),
    );
    expect(requests).toHaveLength(2);
    expect(result).toMatchObject({
      next: '05-confirm',
      reason: 'Case not opened: store down.',
      usage: { modelCalls: 2 },
    });
  });

  it('a step with several edges still needs the model to choose', async () => {
    const { provider, requests } = model([
      [use('send_email', { body: 'Hi' }, 'a')],
      [use('route', { next: 'DONE', reason: 'Replied.' }, 'b')],
    ]);
    const multi = { ...getStep(def, '05-confirm'), next: ['DONE', '04-hand-off'] };
    const result = await run(multi, provider, toolbox({ send_email: { sent: true } }));
    expect(requests).toHaveLength(2);
    expect(result.next).toBe('DONE');
  });

  it('sends the step temperature (default 0) with every model call', async () => {
    const { provider, requests } = model([[use('send_email', { body: 'Hello' })]]);
    await run({ ...getStep(def, '05-confirm'), temperature: 0.7 }, provider, toolbox({ send_email: { sent: true } }));
    expect(requests[0]!.inferenceConfig?.temperature).toBe(0.7);
    expect(getStep(def, '05-confirm').temperature).toBe(0);
  });
});

describe('the model call and the step deadline', () => {
  const reply = getStep(def, '05-confirm');

  it('is refused as a retryable ModelTimeoutError when the step has no budget left for it', async () => {
    const { provider, requests } = model([[use('send_email', { body: 'Hello' })]]);
    await expect(
      run(reply, provider, toolbox({ send_email: { sent: true } }), new ModelDeadline(0)),
    ).rejects.toMatchObject({ name: 'ModelTimeoutError' });
    expect(requests).toHaveLength(0);
  });

  it('is given an abort signal that fires at the deadline, and fails as a retryable ModelTimeoutError', async () => {
    let signal: AbortSignal | undefined;
    const provider: ModelProvider = {
      name: 'bedrock',
      converse: async (_request, options) => {
        signal = options?.signal;
        // A model that never answers: only the abort ends the call.
        return new Promise((_, reject) =>
          options?.signal?.addEventListener('abort', () =>
            reject(Object.assign(new Error('aborted'), { name: 'AbortError' })),
          ),
        );
      },
    };
    await expect(
      run(
        reply,
        provider,
        toolbox({ send_email: { sent: true } }),
        // A clock that stands still: a loaded machine cannot use the budget up before the call starts (a different
        // error); the call's abort timer is real.
        new ModelDeadline(20, { now: () => 0, sleep: async () => undefined }),
      ),
    ).rejects.toMatchObject({ name: 'ModelTimeoutError', message: expect.stringMatching(/step's deadline/) });
    expect(signal?.aborted).toBe(true);
  });
});
