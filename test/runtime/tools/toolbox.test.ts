/**
 * The toolbox without AWS: argument validation, recipient pinning, threading, warranty status and
 * error mapping. Idempotency is switched off here (Powertools' own switch); the integration tests
 * run it against DynamoDB Local.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  jsonFileRegistry,
  SERIAL_NUMBER,
  type WarrantyRegistry,
  warrantyStatus,
} from '../../../lambdas/workflows/warranty-email/registry.ts';
import { type Ticket, type TicketStore, ticketIdFor } from '../../../lambdas/workflows/warranty-email/tickets.ts';
import { ToolUnavailableError } from '../../../src/core/errors.ts';
import { STATEMACHINES_DIR } from '../../../src/core/paths.ts';
import type { InboundEmail } from '../../../src/definitions/workflow/inbound-email.ts';
import { dynamoIdempotencyStore } from '../../../src/runtime/tools/once.ts';
import { createToolbox, type ToolboxOptions } from '../../../src/runtime/tools/toolbox.ts';
import { loggableArgs } from '../../../src/runtime/tools/types.ts';
import { type Mailer, outboxMailer } from '../../../src/runtime/triggers/email/mail.ts';
import { sample } from '../triggers/email/fixtures.ts';
import { EMAIL, toolContext, WARRANTY_TOOLS, withPorts } from './fixtures.ts';

const REGISTRY = join(STATEMACHINES_DIR, 'warranty-email', 'registry.json');
const TODAY = new Date('2026-11-21T12:00:00Z');

const ctx = (step: string, email: InboundEmail = EMAIL) => toolContext(step, email);

interface Ports {
  registry: WarrantyRegistry;
  tickets: TicketStore;
  mailer: Mailer;
}

/** The warranty tools over test doubles (a registry file, in-memory tickets, an outbox). */
function ports(overrides: Partial<Ports> = {}) {
  const tickets: Ticket[] = [];
  const mailer = outboxMailer(undefined, () => TODAY);
  const all: Ports = {
    registry: jsonFileRegistry(REGISTRY),
    tickets: { create: async (t) => (tickets.push(t), t) },
    mailer,
    ...overrides,
  };
  const tools = [
    withPorts(WARRANTY_TOOLS.check_warranty, all.registry),
    withPorts(WARRANTY_TOOLS.create_ticket, all.tickets),
    withPorts(WARRANTY_TOOLS.send_email, all.mailer),
  ];
  return { tools, tickets, sent: mailer.sent };
}

const toolbox = (tools: ReturnType<typeof ports>['tools'], opts: ToolboxOptions = {}) =>
  // Never called: idempotency is off in these tests.
  createToolbox(tools, {
    idempotency: dynamoIdempotencyStore(new DynamoDBClient({ region: 'us-east-1' }), 'unused'),
    ...opts,
  });

beforeAll(() => void vi.stubEnv('POWERTOOLS_IDEMPOTENCY_DISABLED', 'true'));
afterAll(() => void vi.unstubAllEnvs());

describe('send_email', () => {
  it('always writes to the verified sender, in the thread of the inbound mail', async () => {
    const { tools: p, sent } = ports();
    const record = await toolbox(p).execute(
      'send_email',
      { subject: 'About your claim', body: 'We are on it.' },
      ctx('05-send-confirmation'),
    );
    expect(record.error).toBeUndefined();
    expect(sent).toEqual([
      {
        to: 'maria.lopez@example.org',
        subject: 'Re: Headphones stopped charging - warranty claim',
        body: 'We are on it.',
        inReplyTo: EMAIL.messageId,
        execution: 'email-1',
        step: '05-send-confirmation',
        messageId: expect.stringMatching(/^<[a-f0-9]{24}@outbox\.local>$/),
        sentAt: TODAY.toISOString(),
      },
    ]);
    expect(record.result).toEqual({ sent: true, to: 'maria.lopez@example.org', messageId: sent[0]!.messageId });
  });

  it.each([['to'], ['cc'], ['bcc'], ['replyTo']])('refuses a model-supplied %s and sends nothing', async (field) => {
    const { tools: p, sent } = ports();
    const record = await toolbox(p).execute(
      'send_email',
      { body: 'hi', [field]: 'attacker@evil.example' },
      ctx('03b-device-not-found'),
    );
    expect(record.error).toMatch(/^ToolInputError: .*Unrecognized key/);
    expect(record.args).toEqual({ body: 'hi', [field]: 'attacker@evil.example' });
    expect(sent).toEqual([]);
  });

  it('uses the proposed subject only when the inbound mail had none, and omits In-Reply-To without a Message-ID', async () => {
    const { tools: p, sent } = ports();
    await toolbox(p).execute(
      'send_email',
      { subject: 'Your serial number', body: 'x' },
      ctx('03d-request-serial', { ...EMAIL, subject: '', messageId: '' }),
    );
    await toolbox(p).execute(
      'send_email',
      { body: 'y' },
      ctx('03d-request-serial', { ...EMAIL, subject: 'RE: my claim' }),
    );
    expect(sent.map((m) => [m.subject, m.inReplyTo])).toEqual([
      ['Re: Your serial number', undefined],
      ['RE: my claim', EMAIL.messageId],
    ]);
  });

  it('refuses an empty body', async () => {
    const record = await toolbox(ports().tools).execute('send_email', { body: '  ' }, ctx('04-out-of-scope'));
    expect(record.error).toMatch(/^ToolInputError: body:/);
  });
});

describe('check_warranty', () => {
  const check = async (serialNumber: string, today = TODAY) =>
    (
      await toolbox(ports().tools, { clock: () => today }).execute(
        'check_warranty',
        { serialNumber },
        ctx('02-check-warranty'),
      )
    ).result;

  it('answers valid, expired and not_found from the registry by date', async () => {
    expect(await check('SN48213')).toEqual({
      serialNumber: 'SN48213',
      status: 'valid',
      product: 'Lumen X2 wireless headphones',
      warrantyEnd: '2099-12-31',
    });
    expect(await check('SN20417')).toEqual({
      serialNumber: 'SN20417',
      status: 'expired',
      product: 'Vento 5 robot vacuum',
      warrantyEnd: '2024-03-31',
    });
    expect(await check('SN99999')).toEqual({ serialNumber: 'SN99999', status: 'not_found' });
  });

  it('normalises the serial the model passes', async () => {
    expect(await check('  sn48213 ')).toMatchObject({ serialNumber: 'SN48213', status: 'valid' });
  });

  it('counts the last day of cover as covered', async () => {
    expect(await check('SN73105', new Date('2028-05-31T23:59:59Z'))).toMatchObject({ status: 'valid' });
    expect(await check('SN73105', new Date('2028-06-01T00:00:00Z'))).toMatchObject({ status: 'expired' });
  });

  it('is a pure rule underneath', () => {
    const entry = { serial: 'SN1', product: 'p', warrantyEnd: '2026-11-21' };
    expect([
      warrantyStatus(entry, TODAY),
      warrantyStatus(entry, new Date('2026-11-22T00:00:00Z')),
      warrantyStatus(undefined, TODAY),
    ]).toEqual(['valid', 'expired', 'not_found']);
  });

  it('records an invalid registry file as an error', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'registry-')), 'registry.json');
    writeFileSync(file, JSON.stringify([{ serial: 'SN1', product: 'p', warrantyEnd: '31/12/2030' }]));
    const record = await toolbox(ports({ registry: jsonFileRegistry(file) }).tools).execute(
      'check_warranty',
      { serialNumber: 'SN1' },
      ctx('02'),
    );
    expect(record.error).toMatch(/^InvalidInputError: .*registry.json: 0.warrantyEnd: /);
  });
});

describe('create_ticket', () => {
  it('opens a ticket for the verified sender with an id derived from (workflow, execution, step)', async () => {
    const { tools: p, tickets } = ports();
    const record = await toolbox(p, { clock: () => TODAY }).execute(
      'create_ticket',
      { serialNumber: 'sn48213', product: 'Lumen X2 wireless headphones', issueSummary: 'Does not charge.' },
      ctx('03a-valid-warranty'),
    );
    const id = ticketIdFor('warranty-email', 'email-1', '03a-valid-warranty');
    expect(record.result).toEqual({ ticketId: id, status: 'open' });
    expect(tickets).toEqual([
      {
        id,
        serialNumber: 'SN48213',
        product: 'Lumen X2 wireless headphones',
        issueSummary: 'Does not charge.',
        priority: 'normal',
        customer: 'maria.lopez@example.org',
        emailId: 'ses-1',
        execution: 'email-1',
        step: '03a-valid-warranty',
        createdAt: TODAY.toISOString(),
      },
    ]);
  });

  it('names tickets TKT- and 12 unambiguous characters, stable per step', () => {
    const id = ticketIdFor('warranty-email', 'email-1', '03a-valid-warranty');
    expect(id).toMatch(/^TKT-[0-9A-HJKMNP-TV-Z]{12}$/);
    expect(ticketIdFor('warranty-email', 'email-1', '03a-valid-warranty')).toBe(id);
    expect(ticketIdFor('warranty-email', 'email-2', '03a-valid-warranty')).not.toBe(id);
    expect(ticketIdFor('warranty-email', 'email-1', 'other-step')).not.toBe(id);
  });

  it('refuses unknown priorities', async () => {
    const record = await toolbox(ports().tools).execute(
      'create_ticket',
      { serialNumber: 'SN1', issueSummary: 'x', priority: 'urgent!!' },
      ctx('03a'),
    );
    expect(record.error).toMatch(/^ToolInputError: priority:/);
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
    for (const name of Object.keys(WARRANTY_TOOLS)) {
      const spec = box.spec(name)!;
      expect(spec.name).toBe(name);
      expect(spec.input.toJSONSchema()).toMatchObject({ type: 'object', additionalProperties: false });
      for (const arg of spec.personal ?? []) expect(Object.keys(spec.input.shape)).toContain(arg);
    }
    expect(box.spec('toString')).toBeUndefined();
    // One ticket per step; one reply per email, whichever step sends it.
    expect(Object.values(WARRANTY_TOOLS).map((spec) => [spec.name, spec.idempotency])).toEqual([
      ['check_warranty', undefined],
      ['create_ticket', 'step'],
      ['send_email', 'execution'],
    ]);
  });

  it('lets the event log keep only the arguments that carry no personal data', () => {
    // The serial identifies the customer's device; fault descriptions and mail text are personal.
    const { check_warranty, create_ticket, send_email } = WARRANTY_TOOLS;
    expect(loggableArgs(check_warranty, { serialNumber: 'SN48213' })).toEqual({});
    expect(
      loggableArgs(create_ticket, {
        serialNumber: 'SN48213',
        product: 'Lumen X2',
        issueSummary: 'x',
        priority: 'high',
      }),
    ).toEqual({
      product: 'Lumen X2',
      priority: 'high',
    });
    expect(loggableArgs(send_email, { subject: 's', body: 'b' })).toEqual({});
    // An argument outside the schema may carry anything: never kept.
    expect(loggableArgs(create_ticket, { priority: 'low', note: 'call +49 170 1234567' })).toEqual({ priority: 'low' });
  });

  it('uses one serial format across samples and registry', async () => {
    const serialOf = (name: string) => SERIAL_NUMBER.exec(sample(name))?.[0];
    expect(
      ['valid-warranty', 'expired-warranty', 'unknown-serial', 'missing-serial', 'out-of-scope'].map(serialOf),
    ).toEqual(['SN48213', 'SN20417', 'SN99999', undefined, undefined]);
    const registry = jsonFileRegistry(REGISTRY);
    expect(await registry.lookup('SN99999')).toBeUndefined();
    for (const serial of ['SN48213', 'SN20417'])
      expect((await registry.lookup(serial))?.serial).toMatch(new RegExp(`^${SERIAL_NUMBER.source}$`));
  });
});

describe('adapters from the environment', () => {
  it('builds only the adapters a step uses, from its environment', async () => {
    const box = createToolbox(Object.values(WARRANTY_TOOLS), {
      env: { WARRANTY_REGISTRY_FILE: REGISTRY },
      clock: () => TODAY,
    });
    expect((await box.execute('check_warranty', { serialNumber: 'SN48213' }, ctx('02'))).result).toMatchObject({
      status: 'valid',
    });
    const send = await box.execute('send_email', { body: 'x' }, ctx('05'));
    expect(send.error).toMatch(/^InvalidInputError: .*environment has no IDEMPOTENCY_TABLE/);
  });
});
