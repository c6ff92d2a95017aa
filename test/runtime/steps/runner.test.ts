import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidModelOutputError } from '../../../src/core/errors.ts';
import { getStep, loadWorkflow } from '../../../src/definitions/workflow/loader.ts';
import type { StepDefinition } from '../../../src/definitions/workflow/schema.ts';
import type { ContentBlock } from '../../../src/runtime/contracts/model-port.ts';
import { ROUTE_TOOL } from '../../../src/runtime/contracts/prompt.ts';
import { runLlmStep } from '../../../src/runtime/steps/runner.ts';
import { allowListed, withBoundArgs } from '../../../src/runtime/steps/step-toolbox.ts';
import { failure } from '../../support/failure.ts';
import { fakeToolbox, previousState, scriptedModel, stepInput, storedEmail, text, toolUse } from './fixtures.ts';

const def = loadWorkflow('case-desk');
const EMAIL = storedEmail('The desk lamp of my case C-10001 stopped working. Please repair it.');
/** What the email trigger makes of the input's `email` for the prompt (see emailUntrusted). */
const UNTRUSTED = {
  email: {
    fromName: EMAIL.email.fromName,
    subject: EMAIL.email.subject,
    receivedAt: EMAIL.email.receivedAt,
    body: EMAIL.body,
  },
};
/** What step 02 leaves for 03a: the follow-up's case reference and product are bound from it. */
const LOOKED_UP = {
  caseRef: 'C-10001',
  record: { ref: 'C-10001', status: 'open', product: 'Desk lamp' },
};

function run(
  stepName: string,
  turns: Parameters<typeof scriptedModel>[0],
  opts: {
    results?: Parameters<typeof fakeToolbox>[0];
    data?: Record<string, unknown>;
    maxTurns?: number;
    stopReason?: 'max_tokens';
    step?: Partial<StepDefinition>;
  } = {},
) {
  const { model, requests } = scriptedModel(turns, opts.stopReason);
  const { toolbox, executed } = fakeToolbox(opts.results);
  const input = stepInput(stepName, { previous: previousState({ next: stepName, data: opts.data ?? {} }) });
  const step = { ...getStep(def, stepName), ...opts.step };
  // runStep hands the runner a step-scoped toolbox: the allow-list, then the step's bound arguments.
  const scoped = withBoundArgs(allowListed(toolbox, step), step, { data: input.previous.data, input: input.input });
  const result = runLlmStep({
    def,
    step,
    input,
    untrusted: UNTRUSTED,
    untrustedFields: { input: ['email'], data: [] },
    model,
    toolbox: scoped,
    maxTurns: opts.maxTurns,
  });
  return { result, requests, executed };
}

/** The toolResult blocks the runner sent back in the request of `turn` (1-based). */
function toolResults(requests: ReturnType<typeof scriptedModel>['requests'], turn: number) {
  return requests[turn - 1]!.messages.at(-1)!.content.flatMap((b) => ('toolResult' in b ? [b.toolResult] : []));
}

describe('runLlmStep: the request', () => {
  it('sends the instruction, the routing protocol and a cache point, then the step context as untrusted JSON', async () => {
    const { result, requests } = run('01-read-request', [
      [toolUse(ROUTE_TOOL, { next: '02-look-up', reason: 'reference found', caseRef: 'C-10001' })],
    ]);
    await result;
    const [request] = requests;
    const step = getStep(def, '01-read-request');
    expect(request!.system[0]).toEqual({ text: step.instruction });
    expect(request!.system.at(-1)).toEqual({ cachePoint: { type: 'default' } });
    expect((request!.system[1] as { text: string }).text).toContain(
      'must be one of: 02-look-up, 03c-ask-ref, 04-hand-off',
    );
    expect(request!.inferenceConfig).toEqual({ maxTokens: def.manifest.model.maxTokens, temperature: 0 });
    const [preface, context] = request!.messages[0]!.content as { text: string }[];
    expect(preface!.text).toContain('untrusted');
    expect(JSON.parse(context!.text)).toEqual({
      step: '01-read-request',
      input: {},
      untrusted: UNTRUSTED,
      data: {},
      error: null,
    });
    expect(context!.text).not.toContain(EMAIL.email.from); // the model never needs the address
  });

  it('offers exactly the step tools plus route, whose next is an enum of the declared edges', async () => {
    const { result, requests } = run('03a-open-case', [[toolUse('open_case', { summary: 'Does not switch on.' })]], {
      data: LOOKED_UP,
    });
    await result;
    const tools = requests[0]!.toolConfig!.tools.map((t) => t.toolSpec);
    expect(tools.map((t) => t.name)).toEqual(['open_case', ROUTE_TOOL]);
    const route = tools[1]!.inputSchema.json as { properties: Record<string, any>; required: string[] };
    expect(route.properties.next.enum).toEqual(['05-confirm']);
    expect(route.properties.caseId.type).toBe('string');
    expect(route.required).toEqual(['next', 'reason']);
    expect(tools[0]!.inputSchema.json).not.toHaveProperty('$schema');
    // Bound arguments are filled by the engine: the model never sees them.
    expect(Object.keys((tools[0]!.inputSchema.json as { properties: object }).properties)).toEqual([
      'summary',
      'priority',
    ]);
  });

  it('uses the step temperature (default 0) and shows a step with readsUntrusted: false no untrusted input', async () => {
    const step = { ...getStep(def, '01-read-request'), temperature: 0.4, readsUntrusted: false };
    const { model, requests } = scriptedModel([[toolUse(ROUTE_TOOL, { next: '04-hand-off', reason: 'r' })]]);
    const input = stepInput(step.name, { input: { email: EMAIL.email, channel: 'support' } });
    await runLlmStep({
      def,
      step,
      input,
      untrusted: undefined,
      untrustedFields: { input: ['email'], data: [] },
      model,
      toolbox: fakeToolbox().toolbox,
    });
    expect(requests[0]!.inferenceConfig!.temperature).toBe(0.4);
    const context = JSON.parse((requests[0]!.messages[0]!.content[1] as { text: string }).text);
    expect(context).toEqual({ step: step.name, input: { channel: 'support' }, data: {}, error: null });
  });
});

describe('runLlmStep: the recorded transcript', () => {
  it('records exactly what each request sent and each response said, with its stop reason and tokens', async () => {
    // A first route to an undeclared step is answered with the declared edges: two requests, two responses.
    const { result, requests } = run('01-read-request', [
      [toolUse(ROUTE_TOOL, { next: '05-confirm', reason: 'the email says so' }, 'r1')],
      [toolUse(ROUTE_TOOL, { next: '03c-ask-ref', reason: 'no case reference' }, 'r2')],
    ]);
    const { transcript } = await result;
    expect(transcript!.system).toEqual(requests[0]!.system);
    expect(transcript!.toolConfig).toEqual(requests[0]!.toolConfig);
    expect(transcript!.inferenceConfig).toEqual(requests[0]!.inferenceConfig);
    expect(transcript!.calls.map((c) => c.messages)).toEqual(requests.map((r) => r.messages.length));
    // Request k is the first `messages` messages; its response the message after them.
    requests.forEach((request, k) =>
      expect(transcript!.messages.slice(0, transcript!.calls[k]!.messages)).toEqual(request.messages),
    );
    expect(requests).toHaveLength(2);
    expect(transcript!.messages.at(-1)!.content).toEqual([
      toolUse(ROUTE_TOOL, { next: '03c-ask-ref', reason: 'no case reference' }, 'r2'),
    ]);
    expect(transcript!.calls[0]).toMatchObject({
      stopReason: 'tool_use',
      usage: { inputTokens: 100, outputTokens: 10 },
    });
    expect(transcript!.truncated).toBeUndefined();
  });

  it('names the model the provider called, and none for a provider without one', async () => {
    const route = () => [toolUse(ROUTE_TOOL, { next: '03c-ask-ref', reason: 'no case reference' }, 'r1')];
    const served = scriptedModel([route()]);
    const step = getStep(def, '01-read-request');
    const input = stepInput('01-read-request', { previous: previousState({ next: '01-read-request', data: {} }) });
    const args = {
      def,
      step,
      input,
      untrusted: UNTRUSTED,
      untrustedFields: { input: ['email'], data: [] },
      toolbox: fakeToolbox().toolbox,
    };
    const named = await runLlmStep({ ...args, model: { ...served.model, name: 'openai', modelId: 'served-8b' } });
    expect(named.transcript).toMatchObject({ provider: 'openai', modelId: 'served-8b' });
    const unnamed = await runLlmStep({ ...args, model: scriptedModel([route()]).model });
    expect(unnamed.transcript).not.toHaveProperty('modelId');
  });
});

describe('runLlmStep: routing', () => {
  it('returns the route tool decision with the declared outputs as fields', async () => {
    const { result } = run('01-read-request', [
      [
        text('Looking at the email.'),
        toolUse(ROUTE_TOOL, {
          next: '02-look-up',
          reason: 'An issue with a case reference',
          caseRef: 'C-10001',
          summary: 'The desk lamp does not switch on.',
        }),
      ],
    ]);
    expect(await result).toEqual({
      next: '02-look-up',
      reason: 'An issue with a case reference',
      decidedBy: 'model',
      fields: { caseRef: 'C-10001', summary: 'The desk lamp does not switch on.' },
      toolCalls: [],
      usage: { modelCalls: 1, inputTokens: 100, outputTokens: 10, cacheReadInputTokens: 80, cacheWriteInputTokens: 20 },
      transcript: expect.objectContaining({
        provider: 'bedrock',
        stepVersion: getStep(def, '01-read-request').version,
      }),
    });
  });

  it('rejects an injected NEXT_STEP to an undeclared step once, naming the declared edges, and accepts the correction', async () => {
    const { result, requests } = run('01-read-request', [
      [toolUse(ROUTE_TOOL, { next: '05-confirm', reason: 'the email says so' }, 'r1')],
      [toolUse(ROUTE_TOOL, { next: '03c-ask-ref', reason: 'no case reference' }, 'r2')],
    ]);
    const out = await result;
    expect(out.next).toBe('03c-ask-ref');
    const [feedback] = toolResults(requests, 2);
    expect(feedback).toMatchObject({ toolUseId: 'r1', status: 'error' });
    expect((feedback!.content[0] as { text: string }).text).toContain('02-look-up, 03c-ask-ref, 04-hand-off');
    expect(out.toolCalls).toEqual([
      {
        tool: ROUTE_TOOL,
        args: { next: '05-confirm', reason: 'the email says so' },
        error: expect.stringContaining('not a declared edge of 01-read-request'),
      },
    ]);
  });

  it('fails with InvalidModelOutputError when the model repeats an undeclared route, so the ASL Catch takes the fallback', async () => {
    const injected = toolUse(ROUTE_TOOL, { next: '05-confirm', reason: 'skip ahead' });
    const error = await failure(run('01-read-request', [[injected], [injected]]).result);
    expect(error).toBeInstanceOf(InvalidModelOutputError);
    expect(error.name).toBe('InvalidModelOutputError');
    expect(error.message).toContain('route "05-confirm" is not a declared edge of 01-read-request');
  });

  it('never returns an undeclared route as valid, whatever the model answers', async () => {
    const edges = getStep(def, '01-read-request').next;
    const route = fc.oneof(
      fc.constantFrom(...edges, '05-confirm', 'DONE', '04-HAND-OFF', ' 02-look-up', ''),
      fc.string(),
    );
    await fc.assert(
      fc.asyncProperty(route, route, async (first, second) => {
        const { result } = run('01-read-request', [
          [toolUse(ROUTE_TOOL, { next: first, reason: 'r' })],
          [toolUse(ROUTE_TOOL, { next: second, reason: 'r' })],
        ]);
        try {
          expect(edges).toContain((await result).next);
        } catch (e) {
          if (!(e instanceof InvalidModelOutputError)) throw e;
        }
      }),
      { numRuns: 150 },
    );
  });

  it('rejects outputs of the wrong type and a route mixed with other tool calls', async () => {
    const wrongType = await failure(
      run('01-read-request', [
        [toolUse(ROUTE_TOOL, { next: '02-look-up', reason: 'r', caseRef: 10001 })],
        [toolUse(ROUTE_TOOL, { next: '02-look-up', reason: 'r', caseRef: 10001 })],
      ]).result,
    );
    expect(wrongType.message).toContain('route input caseRef');

    // The route was chosen before the case id was known: rejected, but the open_case call still runs.
    const { result, executed } = run(
      '03a-open-case',
      [
        [
          toolUse('open_case', { summary: 'x' }, 't1'),
          toolUse(ROUTE_TOOL, { next: '05-confirm', reason: 'r', caseId: 'CASE-GUESS' }, 'r1'),
        ],
        [toolUse(ROUTE_TOOL, { next: '05-confirm', reason: 'follow-up filed', caseId: 'CASE-REAL' })],
      ],
      { results: { open_case: { caseId: 'CASE-REAL' } }, data: LOOKED_UP },
    );
    const out = await result;
    expect(out.fields).toEqual({ caseId: 'CASE-REAL' });
    expect(executed.map((e) => e.name)).toEqual(['open_case']);
    expect(out.toolCalls.map((c) => [c.tool, c.error?.slice(0, 8)])).toEqual([
      ['open_case', undefined],
      [ROUTE_TOOL, 'rejected'],
    ]);
  });
});

describe('runLlmStep: text fallback', () => {
  it('parses NEXT_STEP, a shortened field label (CASE: for CASE_REF) and REASON lines when the model answers in text', async () => {
    const { result } = run('01-read-request', [
      [text('Decision:\n**NEXT_STEP:** 02-look-up\nCASE: C-10001\nREASON: case reference found')],
    ]);
    expect(await result).toMatchObject({
      next: '02-look-up',
      reason: 'case reference found',
      decidedBy: 'model-text',
      fields: { caseRef: 'C-10001' },
    });
  });

  it('asks once for a route when the answer has none, and says when it was cut off', async () => {
    const { result, requests } = run(
      '01-read-request',
      [[text('Let me think about this email')], [text('NEXT_STEP: 04-hand-off')]],
      { stopReason: 'max_tokens' },
    );
    expect((await result).next).toBe('04-hand-off');
    expect((requests[1]!.messages.at(-1)!.content[0] as { text: string }).text).toContain('cut off');
  });

  it('fails after a repeated undeclared NEXT_STEP in text', async () => {
    const error = await failure(
      run('01-read-request', [[text('NEXT_STEP: 05-confirm')], [text('NEXT_STEP: 05-confirm')]]).result,
    );
    expect(error).toBeInstanceOf(InvalidModelOutputError);
  });
});

describe('runLlmStep: tools', () => {
  it('runs the tool-use loop: executes allowed calls, returns their results, sums usage over turns', async () => {
    // Two edges: the step is not finished by its tool call alone, the model routes.
    const { result, requests, executed } = run(
      '03a-open-case',
      [
        [toolUse('open_case', { summary: 'Does not switch on.' }, 't1')],
        [toolUse(ROUTE_TOOL, { next: '05-confirm', reason: 'Follow-up filed', caseId: 'CASE-12345' })],
      ],
      {
        results: { open_case: { caseId: 'CASE-12345', status: 'open' } },
        data: LOOKED_UP,
        step: { next: ['05-confirm', 'DONE'] },
      },
    );
    const out = await result;
    expect(executed).toHaveLength(1);
    expect(toolResults(requests, 2)).toEqual([
      { toolUseId: 't1', status: 'success', content: [{ text: '{"caseId":"CASE-12345","status":"open"}' }] },
    ]);
    expect(out.toolCalls).toEqual([
      {
        tool: 'open_case',
        args: { summary: 'Does not switch on.', caseRef: 'C-10001', product: 'Desk lamp' },
        result: { caseId: 'CASE-12345', status: 'open' },
      },
    ]);
    expect(out.usage).toEqual({
      modelCalls: 2,
      inputTokens: 200,
      outputTokens: 20,
      cacheReadInputTokens: 160,
      cacheWriteInputTokens: 40,
    });
  });

  it('fills bound arguments from state: the tool runs on the case looked up, with the caller identity', async () => {
    const { result, requests, executed } = run(
      '03a-open-case',
      [
        [toolUse('open_case', { summary: 'Does not switch on.' }, 't1')],
        [toolUse(ROUTE_TOOL, { next: '05-confirm', reason: 'Follow-up filed' })],
      ],
      { results: { open_case: { caseId: 'CASE-12345', status: 'open' } }, data: LOOKED_UP },
    );
    const out = await result;
    expect(executed).toHaveLength(1);
    expect(executed[0]!.ctx).toMatchObject({
      workflow: 'case-desk',
      step: '03a-open-case',
      execution: { name: 'exec-1' },
      input: { email: expect.objectContaining({ id: 'email-1', from: 'nora.kent@example.org' }) },
    });
    expect(executed[0]!.args).toEqual({
      summary: 'Does not switch on.',
      caseRef: 'C-10001',
      product: 'Desk lamp',
    });
    expect(out.toolCalls).toEqual([
      {
        tool: 'open_case',
        args: { summary: 'Does not switch on.', caseRef: 'C-10001', product: 'Desk lamp' },
        result: { caseId: 'CASE-12345', status: 'open' },
      },
    ]);
    // A single-edge step whose outputs all come from tools is done once its calls succeeded: no second model call just
    // to route.
    expect(requests).toHaveLength(1);
    expect(out).toMatchObject({ next: '05-confirm', decidedBy: 'model', usage: { modelCalls: 1 } }); // caseId: the handler takes it from the result (`from`)
  });

  it.each([
    ['the same value', { caseRef: 'C-10001' }, /\(not even to the same value\)/],
    [
      'another case',
      { caseRef: 'C-99999', product: 'Something else' },
      /argument "caseRef" is bound from data.record.ref/,
    ],
  ])(
    'refuses a call that sets a bound argument (%s): never executed, the model is told',
    async (_name, given, message) => {
      const { result, requests, executed } = run(
        '03a-open-case',
        [
          [toolUse('open_case', { ...given, summary: 'x' }, 't1')],
          [toolUse(ROUTE_TOOL, { next: '05-confirm', reason: 'Could not file a follow-up' })],
        ],
        { data: LOOKED_UP },
      );
      const out = await result;
      expect(executed).toEqual([]);
      expect(out.toolCalls[0]).toMatchObject({
        tool: 'open_case',
        error: expect.stringMatching(/^ToolInputError: /),
      });
      expect(out.toolCalls[0]!.error).toMatch(message);
      expect(toolResults(requests, 2)[0]).toMatchObject({ toolUseId: 't1', status: 'error' });
    },
  );

  it('refuses a bound call when the state has no value for it (the tool never runs on a guess)', async () => {
    const { result, executed } = run(
      '03a-open-case',
      [[toolUse('open_case', { summary: 'x' })], [toolUse(ROUTE_TOOL, { next: '05-confirm', reason: 'No follow-up' })]],
      { data: { caseRef: 'C-10001' } },
    );
    expect(executed).toEqual([]);
    expect((await result).toolCalls[0]!.error).toMatch(
      /^ToolInputError: bound argument "caseRef": data.record.ref has no value/,
    );
  });

  it('refuses a tool outside the step allow-list: recorded with an error, never executed, the model is told', async () => {
    const { result, requests, executed } = run('01-read-request', [
      [toolUse('send_email', { body: 'Your lamp will be replaced!' }, 's1')],
      [toolUse(ROUTE_TOOL, { next: '03c-ask-ref', reason: 'no reference' })],
    ]);
    const out = await result;
    expect(executed).toEqual([]);
    expect(out.toolCalls).toEqual([
      {
        tool: 'send_email',
        args: { body: 'Your lamp will be replaced!' },
        error: expect.stringMatching(/^ToolNotAllowedError: tool "send_email" is not allowed in step 01-read-request/),
      },
    ]);
    expect(toolResults(requests, 2)[0]).toMatchObject({ toolUseId: 's1', status: 'error' });
    expect(out.reply).toBeUndefined();
  });

  it('passes tool errors back to the model as error results', async () => {
    const { result, requests } = run(
      '03b-not-found',
      [
        [toolUse('send_email', { body: 'Hello' }, 's1')],
        [toolUse(ROUTE_TOOL, { next: 'DONE', reason: 'Reply not sent: mail down' })],
      ],
      { results: { send_email: { error: 'MailError: rejected' } } },
    );
    const out = await result;
    expect(toolResults(requests, 2)[0]).toEqual({
      toolUseId: 's1',
      status: 'error',
      content: [{ text: 'Error: MailError: rejected' }],
    });
    expect(out.reply).toBeUndefined();
  });

  it('reports the sent reply: the body of the successful send_email call', async () => {
    const { result } = run('03c-ask-ref', [
      [toolUse('send_email', { body: 'Hello Nora, please send us your case reference.' })],
      [toolUse(ROUTE_TOOL, { next: 'DONE', reason: 'Asked for the reference' })],
    ]);
    expect((await result).reply).toBe('Hello Nora, please send us your case reference.');
  });

  it('routes a single-edge step without a route call once its required tool succeeded', async () => {
    const { result, requests } = run('03c-ask-ref', [
      [toolUse('send_email', { body: 'Please send us your case reference.' })],
    ]);
    expect(await result).toMatchObject({
      next: 'DONE',
      decidedBy: 'model',
      reply: 'Please send us your case reference.',
      usage: { modelCalls: 1 },
    });
    expect(requests).toHaveLength(1);
  });

  it('gives up with InvalidModelOutputError after maxTurns without a route', async () => {
    // The reply keeps failing, so the step is never done by itself.
    const loop = (): ContentBlock[] => [toolUse('send_email', { body: 'again' })];
    const error = await failure(
      run('03c-ask-ref', [loop, loop, loop], {
        maxTurns: 3,
        results: { send_email: { error: 'MailError: rejected' } },
      }).result,
    );
    expect(error).toBeInstanceOf(InvalidModelOutputError);
    expect(error.message).toContain('no valid route after 3 model turns');
  });
});
