import type { Logger } from '@aws-lambda-powertools/logger';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  InvalidInputError,
  ModelThrottledError,
  StepFailedError,
  ToolUnavailableError,
} from '../../../src/core/errors.ts';
import { ROUTE_TOOL } from '../../../src/runtime/contracts/prompt.ts';
import type { StepOutput } from '../../../src/runtime/contracts/step.ts';
import { memoryEventLog } from '../../../src/runtime/event-log.ts';
import { createHandler, type StepServices } from '../../../src/runtime/step-handler/handler.ts';
import type { StoredEmail } from '../../../src/runtime/triggers/email/store.ts';
import { failure } from '../../support/failure.ts';
import { ConverseServer, converseBody, serviceError } from '../models/converse-server.ts';
import {
  captureLogger,
  fakeToolbox,
  inboundEmail,
  previousState,
  scriptedModel,
  stepInput,
  toolUse,
} from './fixtures.ts';

const BODY = 'Hello, my desk lamp is broken and will not switch on. It is case C-10001. Nora';
// The model path of every step (step 01's fast path has its own tests, test/runtime/steps/fast-path.test.ts).
const ENV = { WORKFLOW: 'case-desk', MODEL_PROVIDER: 'offline', FAST_PATHS: 'off' };

function setup(
  overrides: Partial<StepServices> = {},
  stored: StoredEmail | null = { email: inboundEmail(), body: BODY },
) {
  const events = memoryEventLog();
  const { toolbox, executed } = fakeToolbox({ send_email: { sent: true } });
  const { logger, lines } = captureLogger();
  const reads: string[] = [];
  let tick = 0;
  const services: StepServices = {
    toolbox,
    events,
    emails: { get: async (id) => (reads.push(id), stored ?? undefined) },
    clock: () => new Date(Date.UTC(2026, 1, 2, 10, 0, 0, tick++ * 40)),
    logger: logger as unknown as Logger,
    ...overrides,
  };
  const handler = (step: string) => createHandler({ ...ENV, STEP: step }, services);
  return { handler, events, executed, lines, reads };
}

const info = (lines: ReturnType<typeof captureLogger>['lines']) =>
  lines.filter((l) => l.level === 'INFO').map((l) => l.message);

describe('step handler', () => {
  it('runs the step and returns the StepOutput the ASL keeps: data merged, count echoed, duration measured', async () => {
    const { handler, reads } = setup();
    const input = stepInput('01-read-request', { previous: previousState({ data: { earlier: 1 } }) });
    const out = (await handler('01-read-request')(input)) as StepOutput;
    expect(out).toMatchObject({
      step: '01-read-request',
      next: '02-look-up',
      decidedBy: 'offline',
      fields: { caseRef: 'C-10001' },
      data: { earlier: 1, caseRef: 'C-10001' },
      count: 1,
      toolCalls: [],
      usage: { modelCalls: 1, inputTokens: 0, outputTokens: 0, cacheReadInputTokens: 0, cacheWriteInputTokens: 0 },
      durationMs: 40,
    });
    expect(reads).toEqual(['email-1']);
  });

  it('appends a StepCompleted event with personal data separated', async () => {
    const { handler, events } = setup();
    await handler('01-read-request')(stepInput('01-read-request'));
    const [event] = await events.list('exec-1');
    expect(event).toMatchObject({
      type: 'StepCompleted',
      executionName: 'exec-1',
      step: '01-read-request',
      count: 1,
      next: '02-look-up',
      decidedBy: 'offline',
    });
    expect(event!.type === 'StepCompleted' && event.fields).not.toHaveProperty('caseRef');
    expect(event!.type === 'StepCompleted' && event.personal.fields).toEqual({ caseRef: 'C-10001' });
  });

  it('logs each step: timing, output summary and transition at INFO without customer data; the data at DEBUG', async () => {
    const { handler, lines } = setup();
    await handler('01-read-request')(stepInput('01-read-request'));
    const infos = info(lines);
    expect(infos).toContain('Step completed: 01-read-request (40ms)');
    expect(infos).toContainEqual(expect.stringMatching(/^Step output: NEXT_STEP=02-look-up, CASE_REF=<pii>, SUMMARY=/));
    expect(infos).toContain(
      'Step transition: 01-read-request → 02-look-up (reason: An issue with a case that has a reference.)',
    );
    expect(JSON.stringify(lines.filter((l) => l.level !== 'DEBUG'))).not.toMatch(/C-10001/i);
    expect(lines.find((l) => l.level === 'DEBUG')!.extra).toMatchObject({ fields: { caseRef: 'C-10001' } });
    expect(lines.find((l) => l.message.startsWith('MODEL_PROVIDER=offline'))!.level).toBe('WARN');
  });

  it('logs at WARN when a step runs without an input it expects, then lets the step decide (02 hands the email over)', async () => {
    const { handler, lines } = setup();
    const without = stepInput('02-look-up', { previous: previousState({ next: '02-look-up' }) });
    const out = (await handler('02-look-up')(without)) as StepOutput;
    expect(out).toMatchObject({ next: '04-hand-off', fields: { handoff: true } });
    expect(lines.filter((l) => l.level === 'WARN' && l.message.startsWith('Step input'))).toEqual([
      {
        level: 'WARN',
        message: 'Step input missing: data.caseRef',
        extra: { execution: 'exec-1', step: '02-look-up', count: 1, path: 'data.caseRef' },
      },
    ]);
    const withRef = stepInput('02-look-up', {
      previous: previousState({ next: '02-look-up', data: { caseRef: 'C-10001' } }),
    });
    lines.length = 0;
    await handler('02-look-up')(withRef);
    expect(lines.filter((l) => l.message.startsWith('Step input'))).toEqual([]);
  });

  it('logs the executed steps from the event log when the workflow ends', async () => {
    const { handler, lines } = setup(
      {},
      { email: inboundEmail({ subject: 'Newsletter' }), body: 'Please unsubscribe me from your newsletter.' },
    );
    const first = (await handler('01-read-request')(stepInput('01-read-request'))) as StepOutput;
    expect(first.next).toBe('04-hand-off');
    const { step, next, reason, decidedBy, fields, data, count } = first;
    const out = (await handler('04-hand-off')(
      stepInput('04-hand-off', { previous: { step, next, reason, decidedBy, fields, data, count } }),
    )) as StepOutput;
    expect(out).toMatchObject({ next: 'DONE', count: 2 });
    expect(info(lines)).toContain('Workflow complete: 2 steps executed: [01-read-request, 04-hand-off]');
  });

  it('runs code steps without reading the email body or building a model', async () => {
    const { handler, reads, executed } = setup();
    const previous = previousState({
      step: '01-read-request',
      next: '04-hand-off',
      reason: 'not about a case',
      decidedBy: 'offline',
      count: 1,
    });
    const out = (await handler('04-hand-off')(stepInput('04-hand-off', { previous }))) as StepOutput;
    expect(out).toMatchObject({ decidedBy: 'code', count: 2, reply: expect.stringContaining('Hello Nora Kent') });
    expect(reads).toEqual([]);
    expect(executed.map((e) => e.name)).toEqual(['send_email']);
  });

  it('refuses an invalid StepInput, a step this function does not run, and a missing email body', async () => {
    const { handler } = setup({}, null);
    expect(await failure(handler('01-read-request')({ ...stepInput('01-read-request'), count: 0 }))).toBeInstanceOf(
      InvalidInputError,
    );
    const bad = { ...stepInput('01-read-request'), input: { email: { ...inboundEmail(), from: 'not-an-address' } } };
    expect((await failure(handler('01-read-request')(bad))).message).toContain('step input: input.email.from');
    expect((await failure(handler('02-look-up')(stepInput('01-read-request')))).message).toContain(
      'this function runs case-desk/02-look-up',
    );
    expect((await failure(handler('01-read-request')(stepInput('01-read-request')))).message).toBe(
      'no stored body for email email-1',
    );
  });

  it('fails a reply step that routes on without a sent reply, so the fallback hands the email to a person', async () => {
    const { toolbox } = fakeToolbox({ send_email: { error: 'MessageRejected: address blocked' } });
    const { handler, events } = setup({ toolbox });
    const input = stepInput('03c-ask-ref', {
      previous: previousState({ step: '01-read-request', next: '03c-ask-ref' }),
    });
    const error = await failure(handler('03c-ask-ref')(input));
    expect(error).toBeInstanceOf(StepFailedError);
    expect(error.message).toMatch(/03c-ask-ref: chose DONE without a successful send_email call/);
    expect(await events.list('exec-1')).toEqual([]);
  });

  describe('an output declared `from` a tool (03a caseId: open_case.caseId)', () => {
    const record = { ref: 'C-10001', status: 'open', product: 'Desk lamp' };
    const previous = previousState({
      step: '02-look-up',
      next: '03a-open-case',
      data: { caseRef: 'C-10001', record },
      count: 2,
    });
    const openCase = toolUse('open_case', { summary: 'Does not switch on.' });
    const caseStep = (
      result: NonNullable<Parameters<typeof fakeToolbox>[0]>[string],
      turns: Parameters<typeof scriptedModel>[0],
    ) => {
      const { toolbox, executed } = fakeToolbox({ open_case: result });
      const { model, requests } = scriptedModel(turns);
      const { handler, lines } = setup({ toolbox, model });
      return {
        run: () => handler('03a-open-case')(stepInput('03a-open-case', { previous })) as Promise<StepOutput>,
        lines,
        executed,
        requests,
      };
    };
    const route = (routed: Record<string, unknown>) =>
      toolUse(ROUTE_TOOL, { next: '05-confirm', reason: 'Follow-up filed', ...routed });

    it('takes the id open_case returned, not the one the model (or the email) made up', async () => {
      // A route in the same turn as the call is refused (chosen before the result was read); the model routes again.
      const { run, lines, executed } = caseStep({ caseId: 'CASE-REAL000AAA', status: 'filed' }, [
        [openCase, route({ caseId: 'CASE-99999' })],
        [route({ caseId: 'CASE-99999' })],
      ]);
      const out = await run();
      expect(out.fields).toEqual({ caseId: 'CASE-REAL000AAA' });
      expect(out.data).toEqual({ caseRef: 'C-10001', record, caseId: 'CASE-REAL000AAA' });
      // The follow-up is for the case step 02 looked up: reference and product are bound from data.record.
      expect(executed.map((e) => e.args)).toEqual([
        { summary: 'Does not switch on.', caseRef: 'C-10001', product: 'Desk lamp' },
      ]);
      const warning = lines.find((l) => l.level === 'WARN' && l.message.startsWith('Step output caseId replaced'))!;
      expect(warning.extra).toMatchObject({
        field: 'caseId',
        from: 'open_case.caseId',
        reported: 'CASE-99999',
        kept: 'CASE-REAL000AAA',
      });
    });

    it('sets the id when the model leaves it out, without a warning, and moves on without a route call (single edge)', async () => {
      const { run, lines, requests } = caseStep({ caseId: 'CASE-REAL000AAA', status: 'filed' }, [[openCase]]);
      const out = await run();
      expect(out).toMatchObject({
        next: '05-confirm',
        decidedBy: 'model',
        data: { caseId: 'CASE-REAL000AAA' },
        usage: { modelCalls: 1 },
      });
      expect(requests).toHaveLength(1);
      expect(lines.filter((l) => l.message.startsWith('Step output caseId replaced'))).toEqual([]);
    });

    it('drops the id when no open_case call succeeded, so step 05 says a person follows up', async () => {
      const { run, lines } = caseStep({ error: 'CaseStoreError: rejected' }, [
        [openCase],
        [route({ caseId: 'CASE-99999' })],
      ]);
      const out = await run();
      expect(out.fields).toEqual({});
      expect(out.data).not.toHaveProperty('caseId');
      expect(lines.find((l) => l.message.startsWith('Step output caseId replaced'))!.extra).toMatchObject({
        reported: 'CASE-99999',
        kept: '(no successful call: removed)',
      });
    });
  });

  it('turns a transient event-log failure into a retried error', async () => {
    const throttled = Object.assign(new Error('slow down'), {
      name: 'ProvisionedThroughputExceededException',
      $metadata: { httpStatusCode: 400 },
    });
    const { handler } = setup({ events: { append: async () => Promise.reject(throttled), list: async () => [] } });
    const error = await failure(handler('01-read-request')(stepInput('01-read-request')));
    expect(error).toBeInstanceOf(ToolUnavailableError);
    expect(error.message).toContain('event log');
  });
});

describe('step handler with MODEL_PROVIDER=bedrock (local Converse server)', () => {
  let server: ConverseServer;
  let endpoint: string;
  const saved = { id: process.env.AWS_ACCESS_KEY_ID, secret: process.env.AWS_SECRET_ACCESS_KEY };
  beforeAll(async () => {
    server = new ConverseServer();
    endpoint = await server.start();
    // The handler builds its client from the default credential chain, as in Lambda.
    process.env.AWS_ACCESS_KEY_ID = 'AKIDLOCAL';
    process.env.AWS_SECRET_ACCESS_KEY = 'local';
  });
  afterAll(async () => {
    process.env.AWS_ACCESS_KEY_ID = saved.id;
    process.env.AWS_SECRET_ACCESS_KEY = saved.secret;
    if (saved.id === undefined) delete process.env.AWS_ACCESS_KEY_ID;
    if (saved.secret === undefined) delete process.env.AWS_SECRET_ACCESS_KEY;
    await server.stop();
  });

  const bedrockEnv = (step: string) => ({
    WORKFLOW: 'case-desk',
    STEP: step,
    MODEL_PROVIDER: 'bedrock',
    MODEL_ID: 'test.pinned-model-v1:0',
    AWS_REGION: 'us-east-1',
    AWS_ENDPOINT_URL_BEDROCK_RUNTIME: endpoint,
    FAST_PATHS: 'off',
  });

  it('calls the pinned model and records its decision and usage', async () => {
    server.reply({
      status: 200,
      body: converseBody(
        [
          {
            toolUse: {
              toolUseId: 't1',
              name: ROUTE_TOOL,
              input: { next: '02-look-up', reason: 'Reference found', caseRef: 'C-10001' },
            },
          },
        ],
        'tool_use',
        {
          inputTokens: 900,
          outputTokens: 30,
          totalTokens: 930,
          cacheReadInputTokens: 850,
        },
      ),
    });
    const handler = createHandler(bedrockEnv('01-read-request'), bedrockServices());
    const out = (await handler(stepInput('01-read-request'))) as StepOutput;
    expect(server.calls.at(-1)!.path).toBe('/model/test.pinned-model-v1%3A0/converse');
    expect(out).toMatchObject({
      next: '02-look-up',
      decidedBy: 'model',
      usage: { modelCalls: 1, inputTokens: 900, outputTokens: 30, cacheReadInputTokens: 850, cacheWriteInputTokens: 0 },
    });
  });

  it('lets ModelThrottledError escape by name, for the ASL Retry', async () => {
    server.reply(serviceError(429, 'ThrottlingException', 'Too many requests'));
    const handler = createHandler(bedrockEnv('01-read-request'), bedrockServices());
    const error = await failure(handler(stepInput('01-read-request')));
    expect(error).toBeInstanceOf(ModelThrottledError);
    expect(error.name).toBe('ModelThrottledError');
  });

  function bedrockServices(): StepServices {
    return {
      events: memoryEventLog(),
      toolbox: fakeToolbox().toolbox,
      emails: { get: async () => ({ email: inboundEmail(), body: BODY }) },
      logger: captureLogger().logger as unknown as Logger,
    };
  }
});
