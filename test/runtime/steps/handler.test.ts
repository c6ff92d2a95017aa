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

const BODY = 'Hello, my Aurora 14 laptop is broken and will not start. The serial number is SN12345. Anna';
// The model path of every step (step 01's fast path has its own tests, test/runtime/steps/fast-path.test.ts,
// test/local/sessions/fast-path.int.test.ts).
const ENV = { WORKFLOW: 'warranty-email', MODEL_PROVIDER: 'offline', FAST_PATHS: 'off' };

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
    const input = stepInput('01-extract-serial', { previous: previousState({ data: { earlier: 1 } }) });
    const out = (await handler('01-extract-serial')(input)) as StepOutput;
    expect(out).toMatchObject({
      step: '01-extract-serial',
      next: '02-check-warranty',
      decidedBy: 'offline',
      fields: { serialNumber: 'SN12345' },
      data: { earlier: 1, serialNumber: 'SN12345' },
      count: 1,
      toolCalls: [],
      usage: { modelCalls: 1, inputTokens: 0, outputTokens: 0, cacheReadInputTokens: 0, cacheWriteInputTokens: 0 },
      durationMs: 40,
    });
    expect(reads).toEqual(['email-1']);
  });

  it('appends a StepCompleted event with personal data separated', async () => {
    const { handler, events } = setup();
    await handler('01-extract-serial')(stepInput('01-extract-serial'));
    const [event] = await events.list('exec-1');
    expect(event).toMatchObject({
      type: 'StepCompleted',
      executionName: 'exec-1',
      step: '01-extract-serial',
      count: 1,
      next: '02-check-warranty',
      decidedBy: 'offline',
    });
    expect(event!.type === 'StepCompleted' && event.fields).not.toHaveProperty('serialNumber');
    expect(event!.type === 'StepCompleted' && event.personal.fields).toEqual({ serialNumber: 'SN12345' });
  });

  it('logs each step: timing, output summary and transition at INFO without customer data; the data at DEBUG', async () => {
    const { handler, lines } = setup();
    await handler('01-extract-serial')(stepInput('01-extract-serial'));
    const infos = info(lines);
    expect(infos).toContain('Step completed: 01-extract-serial (40ms)');
    expect(infos).toContainEqual(
      expect.stringMatching(/^Step output: NEXT_STEP=02-check-warranty, SERIAL_NUMBER=<pii>, ISSUE_SUMMARY=/),
    );
    expect(infos).toContain(
      'Step transition: 01-extract-serial → 02-check-warranty (reason: Warranty claim with a serial number.)',
    );
    expect(JSON.stringify(lines.filter((l) => l.level !== 'DEBUG'))).not.toContain('SN12345');
    expect(lines.find((l) => l.level === 'DEBUG')!.extra).toMatchObject({ fields: { serialNumber: 'SN12345' } });
    expect(lines.find((l) => l.message.startsWith('MODEL_PROVIDER=offline'))!.level).toBe('WARN');
  });

  it('logs at WARN when a step runs without an input it expects, then lets the step decide (02 hands the email over)', async () => {
    const { handler, lines } = setup();
    const without = stepInput('02-check-warranty', { previous: previousState({ next: '02-check-warranty' }) });
    const out = (await handler('02-check-warranty')(without)) as StepOutput;
    expect(out).toMatchObject({ next: '04-out-of-scope', fields: { handoff: true } });
    expect(lines.filter((l) => l.level === 'WARN' && l.message.startsWith('Step input'))).toEqual([
      {
        level: 'WARN',
        message: 'Step input missing: data.serialNumber',
        extra: { execution: 'exec-1', step: '02-check-warranty', count: 1, path: 'data.serialNumber' },
      },
    ]);
    const withSerial = stepInput('02-check-warranty', {
      previous: previousState({ next: '02-check-warranty', data: { serialNumber: 'SN12345' } }),
    });
    lines.length = 0;
    await handler('02-check-warranty')(withSerial);
    expect(lines.filter((l) => l.message.startsWith('Step input'))).toEqual([]);
  });

  it('logs the executed steps from the event log when the workflow ends', async () => {
    const { handler, lines } = setup(
      {},
      { email: inboundEmail({ subject: 'Newsletter' }), body: 'Please unsubscribe me from your newsletter.' },
    );
    const first = (await handler('01-extract-serial')(stepInput('01-extract-serial'))) as StepOutput;
    expect(first.next).toBe('04-out-of-scope');
    const { step, next, reason, decidedBy, fields, data, count } = first;
    const out = (await handler('04-out-of-scope')(
      stepInput('04-out-of-scope', { previous: { step, next, reason, decidedBy, fields, data, count } }),
    )) as StepOutput;
    expect(out).toMatchObject({ next: 'DONE', count: 2 });
    expect(info(lines)).toContain('Workflow complete: 2 steps executed: [01-extract-serial, 04-out-of-scope]');
  });

  it('runs code steps without reading the email body or building a model', async () => {
    const { handler, reads, executed } = setup();
    const previous = previousState({
      step: '01-extract-serial',
      next: '04-out-of-scope',
      reason: 'not a claim',
      decidedBy: 'offline',
      count: 1,
    });
    const out = (await handler('04-out-of-scope')(stepInput('04-out-of-scope', { previous }))) as StepOutput;
    expect(out).toMatchObject({ decidedBy: 'code', count: 2, reply: expect.stringContaining('Hello Anna Berg') });
    expect(reads).toEqual([]);
    expect(executed.map((e) => e.name)).toEqual(['send_email']);
  });

  it('refuses an invalid StepInput, a step this function does not run, and a missing email body', async () => {
    const { handler } = setup({}, null);
    expect(await failure(handler('01-extract-serial')({ ...stepInput('01-extract-serial'), count: 0 }))).toBeInstanceOf(
      InvalidInputError,
    );
    const bad = { ...stepInput('01-extract-serial'), input: { email: { ...inboundEmail(), from: 'not-an-address' } } };
    expect((await failure(handler('01-extract-serial')(bad))).message).toContain('step input: input.email.from');
    expect((await failure(handler('02-check-warranty')(stepInput('01-extract-serial')))).message).toContain(
      'this function runs warranty-email/02-check-warranty',
    );
    expect((await failure(handler('01-extract-serial')(stepInput('01-extract-serial')))).message).toBe(
      'no stored body for email email-1',
    );
  });

  it('fails a reply step that routes on without a sent reply, so the fallback hands the email to a person', async () => {
    const { toolbox } = fakeToolbox({ send_email: { error: 'MessageRejected: address blocked' } });
    const { handler, events } = setup({ toolbox });
    const input = stepInput('03d-request-serial', {
      previous: previousState({ step: '01-extract-serial', next: '03d-request-serial' }),
    });
    const error = await failure(handler('03d-request-serial')(input));
    expect(error).toBeInstanceOf(StepFailedError);
    expect(error.message).toMatch(/03d-request-serial: chose DONE without a successful send_email call/);
    expect(await events.list('exec-1')).toEqual([]);
  });

  describe('an output declared `from` a tool (03a ticketId: create_ticket.ticketId)', () => {
    const warranty = { serialNumber: 'SN12345', status: 'valid', product: 'Aurora 14', warrantyEnd: '2099-12-31' };
    const previous = previousState({
      step: '02-check-warranty',
      next: '03a-valid-warranty',
      data: { serialNumber: 'SN12345', warranty },
      count: 2,
    });
    const createTicket = toolUse('create_ticket', { issueSummary: 'Does not start.' });
    const ticketStep = (
      result: NonNullable<Parameters<typeof fakeToolbox>[0]>[string],
      turns: Parameters<typeof scriptedModel>[0],
    ) => {
      const { toolbox, executed } = fakeToolbox({ create_ticket: result });
      const { model, requests } = scriptedModel(turns);
      const { handler, lines } = setup({ toolbox, model });
      return {
        run: () => handler('03a-valid-warranty')(stepInput('03a-valid-warranty', { previous })) as Promise<StepOutput>,
        lines,
        executed,
        requests,
      };
    };
    const route = (routed: Record<string, unknown>) =>
      toolUse(ROUTE_TOOL, { next: '05-send-confirmation', reason: 'Repair ticket created', ...routed });

    it('takes the id create_ticket returned, not the one the model (or the email) made up', async () => {
      // A route in the same turn as the call is refused (chosen before the result was read); the model routes again.
      const { run, lines, executed } = ticketStep({ ticketId: 'TKT-REAL0000AAAA', status: 'open' }, [
        [createTicket, route({ ticketId: 'TKT-99999' })],
        [route({ ticketId: 'TKT-99999' })],
      ]);
      const out = await run();
      expect(out.fields).toEqual({ ticketId: 'TKT-REAL0000AAAA' });
      expect(out.data).toEqual({ serialNumber: 'SN12345', warranty, ticketId: 'TKT-REAL0000AAAA' });
      // The ticket is for the device step 02 checked: serial and product are bound from data.warranty.
      expect(executed.map((e) => e.args)).toEqual([
        { issueSummary: 'Does not start.', serialNumber: 'SN12345', product: 'Aurora 14' },
      ]);
      const warning = lines.find((l) => l.level === 'WARN' && l.message.startsWith('Step output ticketId replaced'))!;
      expect(warning.extra).toMatchObject({
        field: 'ticketId',
        from: 'create_ticket.ticketId',
        reported: 'TKT-99999',
        kept: 'TKT-REAL0000AAAA',
      });
    });

    it('sets the id when the model leaves it out, without a warning, and moves on without a route call (single edge)', async () => {
      const { run, lines, requests } = ticketStep({ ticketId: 'TKT-REAL0000AAAA', status: 'open' }, [[createTicket]]);
      const out = await run();
      expect(out).toMatchObject({
        next: '05-send-confirmation',
        decidedBy: 'model',
        data: { ticketId: 'TKT-REAL0000AAAA' },
        usage: { modelCalls: 1 },
      });
      expect(requests).toHaveLength(1);
      expect(lines.filter((l) => l.message.startsWith('Step output ticketId replaced'))).toEqual([]);
    });

    it('drops the id when no create_ticket call succeeded, so step 05 sends the hand-off reply', async () => {
      const { run, lines } = ticketStep({ error: 'TicketStoreError: rejected' }, [
        [createTicket],
        [route({ ticketId: 'TKT-99999' })],
      ]);
      const out = await run();
      expect(out.fields).toEqual({});
      expect(out.data).not.toHaveProperty('ticketId');
      expect(lines.find((l) => l.message.startsWith('Step output ticketId replaced'))!.extra).toMatchObject({
        reported: 'TKT-99999',
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
    const error = await failure(handler('01-extract-serial')(stepInput('01-extract-serial')));
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
    WORKFLOW: 'warranty-email',
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
              input: { next: '02-check-warranty', reason: 'Serial found', serialNumber: 'SN12345' },
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
    const handler = createHandler(bedrockEnv('01-extract-serial'), bedrockServices());
    const out = (await handler(stepInput('01-extract-serial'))) as StepOutput;
    expect(server.calls.at(-1)!.path).toBe('/model/test.pinned-model-v1%3A0/converse');
    expect(out).toMatchObject({
      next: '02-check-warranty',
      decidedBy: 'model',
      usage: { modelCalls: 1, inputTokens: 900, outputTokens: 30, cacheReadInputTokens: 850, cacheWriteInputTokens: 0 },
    });
  });

  it('lets ModelThrottledError escape by name, for the ASL Retry', async () => {
    server.reply(serviceError(429, 'ThrottlingException', 'Too many requests'));
    const handler = createHandler(bedrockEnv('01-extract-serial'), bedrockServices());
    const error = await failure(handler(stepInput('01-extract-serial')));
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
