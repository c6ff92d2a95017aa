/**
 * Routing without wasted model calls: a single-edge step routes on once its tools did their job;
 * a step with several edges still needs the model's decision. The step's temperature is passed on.
 */
import { describe, expect, it } from 'vitest';
import createTicket from '../../../lambdas/workflows/warranty-email/tools/create-ticket.ts';
import sendEmail from '../../../lambdas/workflows/warranty-email/tools/send-email.ts';
import { getStep, loadWorkflow } from '../../../src/definitions/workflow/loader.ts';
import type { StepDefinition } from '../../../src/definitions/workflow/schema.ts';
import type { ContentBlock, ConverseRequest, ModelProvider } from '../../../src/runtime/contracts/model-port.ts';
import type { StepInput, ToolCallRecord } from '../../../src/runtime/contracts/step.ts';
import { ModelDeadline } from '../../../src/runtime/models/deadline.ts';
import { runLlmStep } from '../../../src/runtime/steps/runner.ts';
import type { Toolbox, ToolSpec } from '../../../src/runtime/tools/types.ts';

const def = loadWorkflow('warranty-email');

function model(turns: ContentBlock[][]) {
  const requests: ConverseRequest[] = [];
  const provider: ModelProvider = {
    name: 'bedrock',
    async converse(request) {
      requests.push(request);
      const content = turns[requests.length - 1];
      if (!content) throw new Error(`no turn ${requests.length}`);
      return {
        output: { message: { role: 'assistant', content } },
        stopReason: 'tool_use',
        usage: { inputTokens: 100, outputTokens: 10, totalTokens: 110 },
      };
    },
  };
  return { provider, requests };
}

function toolbox(answer: (name: string) => Pick<ToolCallRecord, 'result' | 'error'>): Toolbox {
  const specs: Record<string, ToolSpec> = { send_email: sendEmail, create_ticket: createTicket };
  return {
    spec: (name) => specs[name],
    execute: async (name, args) => ({ tool: name, args: args as Record<string, unknown>, ...answer(name) }),
  };
}

const use = (name: string, input: unknown, id = name): ContentBlock => ({ toolUse: { toolUseId: id, name, input } });

function input(step: string): StepInput {
  return {
    workflow: 'warranty-email',
    step,
    input: {},
    previous: {
      step: null,
      next: step,
      reason: 'start',
      decidedBy: null,
      fields: {},
      data: { ticketId: 'TKT-1' },
      count: 0,
    },
    error: null,
    count: 1,
    execution: { id: 'arn', name: 'e1' },
  };
}

const run = (step: StepDefinition, provider: ModelProvider, box: Toolbox, deadline?: ModelDeadline) =>
  runLlmStep({
    def,
    step,
    input: input(step.name),
    untrusted: undefined,
    untrustedFields: { input: ['email'], data: [] },
    model: provider,
    toolbox: box,
    deadline,
  });

describe('single-edge routing', () => {
  it('a reply step routes to its one edge after the required reply succeeded: one model call', async () => {
    const { provider, requests } = model([[use('send_email', { body: 'Hello' })]]);
    const result = await run(
      getStep(def, '05-send-confirmation'),
      provider,
      toolbox(() => ({ result: { sent: true } })),
    );
    expect(requests).toHaveLength(1);
    expect(result).toMatchObject({
      next: 'DONE',
      decidedBy: 'model',
      reply: 'Hello',
      usage: { modelCalls: 1, inputTokens: 100 },
    });
  });

  it('without requires, routes on after a turn whose calls all succeeded (03a: one call)', async () => {
    const { provider, requests } = model([[use('create_ticket', { issueSummary: 'Broken.' })]]);
    const result = await run(
      getStep(def, '03a-valid-warranty'),
      provider,
      toolbox(() => ({ result: { ticketId: 'TKT-9', status: 'open' } })),
    );
    expect(requests).toHaveLength(1);
    expect(result).toMatchObject({ next: '05-send-confirmation', usage: { modelCalls: 1 } });
  });

  it('gives the model another turn when a call failed', async () => {
    const { provider, requests } = model([
      [use('create_ticket', { issueSummary: 'Broken.' }, 'a')],
      [use('route', { next: '05-send-confirmation', reason: 'Ticket not created: store down.' }, 'b')],
    ]);
    const result = await run(
      getStep(def, '03a-valid-warranty'),
      provider,
      toolbox(() => ({ error: 'TicketConflictError: taken' })),
    );
    expect(requests).toHaveLength(2);
    expect(result).toMatchObject({
      next: '05-send-confirmation',
      reason: 'Ticket not created: store down.',
      usage: { modelCalls: 2 },
    });
  });

  it('a step with several edges still needs the model to choose', async () => {
    const { provider, requests } = model([
      [use('send_email', { body: 'Hi' }, 'a')],
      [use('route', { next: 'DONE', reason: 'Replied.' }, 'b')],
    ]);
    const multi = { ...getStep(def, '05-send-confirmation'), next: ['DONE', '04-out-of-scope'] };
    const result = await run(
      multi,
      provider,
      toolbox(() => ({ result: { sent: true } })),
    );
    expect(requests).toHaveLength(2);
    expect(result.next).toBe('DONE');
  });

  it('sends the step temperature (default 0) with every model call', async () => {
    const { provider, requests } = model([[use('send_email', { body: 'Hello' })]]);
    await run(
      { ...getStep(def, '05-send-confirmation'), temperature: 0.7 },
      provider,
      toolbox(() => ({ result: { sent: true } })),
    );
    expect(requests[0]!.inferenceConfig?.temperature).toBe(0.7);
    expect(getStep(def, '05-send-confirmation').temperature).toBe(0);
  });
});

describe('the model call and the step deadline', () => {
  const reply = getStep(def, '05-send-confirmation');

  it('is refused as a retryable ModelTimeoutError when the step has no budget left for it', async () => {
    const { provider, requests } = model([[use('send_email', { body: 'Hello' })]]);
    await expect(
      run(
        reply,
        provider,
        toolbox(() => ({ result: { sent: true } })),
        new ModelDeadline(0),
      ),
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
        toolbox(() => ({ result: { sent: true } })),
        // A clock that stands still: a loaded machine cannot use the budget up before the call starts (a different
        // error); the call's abort timer is real.
        new ModelDeadline(20, { now: () => 0, sleep: async () => undefined }),
      ),
    ).rejects.toMatchObject({ name: 'ModelTimeoutError', message: expect.stringMatching(/step's deadline/) });
    expect(signal?.aborted).toBe(true);
  });
});
