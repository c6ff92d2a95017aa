/**
 * The toolbox without AWS: argument validation, recipient pinning, threading and error mapping, over the tools of the
 * fixture project's case-desk workflow. Idempotency is switched off here (Powertools' own switch); the integration
 * tests run it against DynamoDB Local.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ToolUnavailableError } from '../../../src/core/errors.ts';
import type { InboundEmail } from '../../../src/definitions/workflow/inbound-email.ts';
import { createToolbox } from '../../../src/runtime/tools/toolbox.ts';
import { loggableArgs } from '../../../src/runtime/tools/types.ts';
import { type Mailer, outboxMailer } from '../../../src/runtime/triggers/email/mail.ts';
import { FIXTURE_STATEMACHINES } from '../../support/fixture-project.ts';
import { DESK_TOOLS, EMAIL, toolboxWithoutIdempotency as toolbox, toolContext, withPorts } from './fixtures.ts';

/** case-desk's case records: lookup_case reads them when the environment names the file (`CASES_FILE`). */
const CASES = join(FIXTURE_STATEMACHINES, 'case-desk', 'cases.json');
const TODAY = new Date('2026-11-21T12:00:00Z');

const ctx = (step: string, email: InboundEmail = EMAIL) => toolContext(step, email);

/** case-desk's tools, send_email over `mailer` (an outbox by default); the others are never run here. */
function ports({ mailer }: { mailer?: Mailer } = {}) {
  const outbox = outboxMailer(undefined, () => TODAY);
  const tools = [DESK_TOOLS.lookup_case, DESK_TOOLS.open_case, withPorts(DESK_TOOLS.send_email, mailer ?? outbox)];
  return { tools, sent: outbox.sent };
}

beforeAll(() => void vi.stubEnv('POWERTOOLS_IDEMPOTENCY_DISABLED', 'true'));
afterAll(() => void vi.unstubAllEnvs());

describe('send_email', () => {
  it('always writes to the verified sender, in the thread of the inbound mail', async () => {
    const { tools: p, sent } = ports();
    const record = await toolbox(p).execute(
      'send_email',
      { subject: 'About your case', body: 'We are on it.' },
      ctx('05-confirm'),
    );
    expect(record.error).toBeUndefined();
    expect(sent).toEqual([
      {
        to: 'nora.kent@example.org',
        subject: 'Re: Desk lamp broken again - C-10001',
        body: 'We are on it.',
        inReplyTo: EMAIL.messageId,
        execution: 'email-1',
        step: '05-confirm',
        messageId: expect.stringMatching(/^<[a-f0-9]{24}@outbox\.local>$/),
        sentAt: TODAY.toISOString(),
      },
    ]);
    expect(record.result).toEqual({ sent: true, to: 'nora.kent@example.org', messageId: sent[0]!.messageId });
  });

  it.each([['to'], ['cc'], ['bcc'], ['replyTo']])('refuses a model-supplied %s and sends nothing', async (field) => {
    const { tools: p, sent } = ports();
    const record = await toolbox(p).execute(
      'send_email',
      { body: 'hi', [field]: 'attacker@evil.example' },
      ctx('03b-not-found'),
    );
    expect(record.error).toMatch(/^ToolInputError: .*Unrecognized key/);
    expect(record.args).toEqual({ body: 'hi', [field]: 'attacker@evil.example' });
    expect(sent).toEqual([]);
  });

  it('uses the proposed subject only when the inbound mail had none, and omits In-Reply-To without a Message-ID', async () => {
    const { tools: p, sent } = ports();
    await toolbox(p).execute(
      'send_email',
      { subject: 'Your case reference', body: 'x' },
      ctx('03c-ask-ref', { ...EMAIL, subject: '', messageId: '' }),
    );
    await toolbox(p).execute('send_email', { body: 'y' }, ctx('03c-ask-ref', { ...EMAIL, subject: 'RE: my lamp' }));
    expect(sent.map((m) => [m.subject, m.inReplyTo])).toEqual([
      ['Re: Your case reference', undefined],
      ['RE: my lamp', EMAIL.messageId],
    ]);
  });

  it('refuses an empty body', async () => {
    const record = await toolbox(ports().tools).execute('send_email', { body: '  ' }, ctx('04-hand-off'));
    expect(record.error).toMatch(/^ToolInputError: body:/);
  });
});

describe('errors', () => {
  const failingMailer = (error: Error) => ({ send: async () => Promise.reject(error) });
  const awsError = (name: string, status: number, extra: object = {}) =>
    Object.assign(new Error(`${name} happened`), { name, $metadata: { httpStatusCode: status }, ...extra });

  it.each([
    ['throttling', awsError('ThrottlingException', 400)],
    ['HTTP 429', awsError('TooManyRequestsException', 429)],
    ['a 5xx', awsError('InternalFailure', 500)],
    ['a network failure', Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' })],
  ])('turns %s into ToolUnavailableError (the ASL retries it)', async (_name, error) => {
    const call = toolbox(ports({ mailer: failingMailer(error) }).tools).execute('send_email', { body: 'x' }, ctx('05'));
    await expect(call).rejects.toBeInstanceOf(ToolUnavailableError);
    await expect(call).rejects.toThrow(/^send_email: /);
  });

  it('records a permanent failure instead of throwing', async () => {
    expect(
      (
        await toolbox(ports({ mailer: failingMailer(awsError('MessageRejected', 400)) }).tools).execute(
          'send_email',
          { body: 'x' },
          ctx('05'),
        )
      ).error,
    ).toBe('MessageRejected: MessageRejected happened');
  });

  it('records an unknown tool without running anything', async () => {
    expect(await toolbox(ports().tools).execute('delete_everything', { all: true }, ctx('05'))).toEqual({
      tool: 'delete_everything',
      args: { all: true },
      error: 'ToolNotAllowedError: unknown tool "delete_everything"',
    });
  });

  it("keeps only a bounded summary of a refused call's arguments", async () => {
    const huge = {
      body: 'x'.repeat(50_000),
      ...Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`k${i}`, i])),
    };
    const record = await toolbox(ports().tools).execute('delete_everything', huge, ctx('05'));
    expect(record.error).toMatch(/^ToolNotAllowedError: /);
    expect(JSON.stringify(record.args).length).toBeLessThan(2_000);
    expect(record.args.body).toMatch(/…\(50000 chars\)$/);
  });
});

describe('specs', () => {
  it('describes every tool, with strict schemas the model sees as JSON Schema', () => {
    const box = toolbox(ports().tools);
    for (const name of Object.keys(DESK_TOOLS)) {
      const spec = box.spec(name)!;
      expect(spec.name).toBe(name);
      expect(spec.input.toJSONSchema()).toMatchObject({ type: 'object', additionalProperties: false });
      for (const arg of spec.personal ?? []) expect(Object.keys(spec.input.shape)).toContain(arg);
    }
    expect(box.spec('toString')).toBeUndefined();
    // One follow-up per step; one reply per email, whichever step sends it.
    expect(Object.values(DESK_TOOLS).map((spec) => [spec.name, spec.idempotency])).toEqual([
      ['lookup_case', undefined],
      ['open_case', 'step'],
      ['send_email', 'execution'],
    ]);
  });

  it('lets the event log keep only the arguments that carry no personal data', () => {
    // The reference identifies the customer's case; issue summaries and mail text are personal.
    const { lookup_case, open_case, send_email } = DESK_TOOLS;
    expect(loggableArgs(lookup_case, { caseRef: 'C-10001' })).toEqual({});
    expect(
      loggableArgs(open_case, {
        caseRef: 'C-10001',
        product: 'Desk lamp',
        summary: 'x',
        priority: 'high',
      }),
    ).toEqual({
      product: 'Desk lamp',
      priority: 'high',
    });
    expect(loggableArgs(send_email, { subject: 's', body: 'b' })).toEqual({});
    // An argument outside the schema may carry anything: never kept.
    expect(loggableArgs(open_case, { priority: 'low', note: 'call +49 170 1234567' })).toEqual({ priority: 'low' });
  });
});

describe('adapters from the environment', () => {
  it('builds only the adapters a step uses, from its environment', async () => {
    const box = createToolbox(Object.values(DESK_TOOLS), { env: { CASES_FILE: CASES }, clock: () => TODAY });
    expect((await box.execute('lookup_case', { caseRef: 'C-10001' }, ctx('02'))).result).toEqual({
      ref: 'C-10001',
      status: 'open',
      product: 'Desk lamp',
    });
    const send = await box.execute('send_email', { body: 'x' }, ctx('05'));
    expect(send.error).toMatch(/^InvalidInputError: .*environment has no IDEMPOTENCY_TABLE/);
  });
});
