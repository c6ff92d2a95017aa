/**
 * Side-effecting tools against DynamoDB Local: a retried step opens one ticket, an execution sends
 * one mail (whichever steps try). Each "retry" uses a fresh toolbox and fresh adapters, as a new
 * Lambda attempt would.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, PutCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dynamoRegistry, registryItem } from '../../../lambdas/workflows/warranty-email/registry.ts';
import {
  dynamoTicketStore,
  type Ticket,
  TicketConflictError,
  ticketIdFor,
} from '../../../lambdas/workflows/warranty-email/tickets.ts';
import { ToolUnavailableError } from '../../../src/core/errors.ts';
import { sessionDynamoDb } from '../../../src/local/cloud/dynamodb-connection.ts';
import type { DynamoDbLocal } from '../../../src/local/cloud/dynamodb-local.ts';
import { dynamoIdempotencyStore } from '../../../src/runtime/tools/once.ts';
import { createToolbox, type ToolboxOptions } from '../../../src/runtime/tools/toolbox.ts';
import { type Mailer, outboxMailer } from '../../../src/runtime/triggers/email/mail.ts';
import { failure } from '../../support/failure.ts';
import { createTable, toolContext, WARRANTY_TOOLS, withPorts } from './fixtures.ts';

let ddb: DynamoDbLocal;
/** This file's tables on the suite's shared emulator (named after the connection's prefix). */
let TICKETS: string;
let IDEMPOTENCY: string;
let WARRANTY: string;

beforeAll(async () => {
  ddb = await sessionDynamoDb();
  [TICKETS, IDEMPOTENCY, WARRANTY] = ['Tickets', 'Idempotency', 'Warranty'].map((name) => `${ddb.tablePrefix}${name}`);
  await Promise.all([
    createTable(ddb.client, TICKETS),
    createTable(ddb.client, IDEMPOTENCY, 'expiresAt'),
    createTable(ddb.client, WARRANTY),
  ]);
});
afterAll(async () => ddb?.stop());

/** A fresh "Lambda attempt": new adapters over the same tables and outbox. */
function attempt(mailer: Mailer, opts: ToolboxOptions = {}) {
  const tools = [
    withPorts(WARRANTY_TOOLS.create_ticket, dynamoTicketStore(ddb.client, TICKETS)),
    withPorts(WARRANTY_TOOLS.send_email, mailer),
  ];
  return createToolbox(tools, { idempotency: dynamoIdempotencyStore(ddb.client, IDEMPOTENCY), ...opts });
}

/** A client with the step role's rights on TicketsTable: it may write, and every read is denied (as IAM would). */
function writeOnlyClient(): DynamoDBClient {
  const client = new DynamoDBClient({
    endpoint: ddb.endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  client.middlewareStack.add(
    (next, context) => async (args) => {
      if (/^(Get|BatchGet|Query|Scan)/.test(context.commandName ?? ''))
        throw Object.assign(new Error(`not authorized to perform ${context.commandName}`), {
          name: 'AccessDeniedException',
          $metadata: { httpStatusCode: 400 },
        });
      return next(args);
    },
    { step: 'initialize', name: 'denyReads' },
  );
  return client;
}

const storedTicket = (overrides: Partial<Ticket>): Ticket => ({
  id: 'TKT-TESTTESTTEST',
  serialNumber: 'SN48213',
  issueSummary: 'first',
  priority: 'normal',
  customer: 'maria.lopez@example.org',
  emailId: 'ses-1',
  execution: 'email-store',
  step: '03a-valid-warranty',
  createdAt: '2026-11-21T12:00:00.000Z',
  ...overrides,
});

const scan = async (table: string) =>
  (await DynamoDBDocumentClient.from(ddb.client).send(new ScanCommand({ TableName: table }))).Items ?? [];
const ticketsOf = async (execution: string) => (await scan(TICKETS)).filter((t) => t.execution === execution);

describe('create_ticket', () => {
  it('opens one ticket when the step is retried, and the retry gets the first result', async () => {
    const ctx = toolContext('03a-valid-warranty', undefined, 'email-ticket-retry');
    const outbox = outboxMailer();
    const first = await attempt(outbox).execute(
      'create_ticket',
      { serialNumber: 'SN48213', issueSummary: 'Does not charge.' },
      ctx,
    );
    // The model words it differently on the retry: still the same ticket, nothing written.
    const retry = await attempt(outbox).execute(
      'create_ticket',
      { serialNumber: 'SN48213', issueSummary: 'Will not charge at all.', priority: 'high' },
      ctx,
    );

    expect(first.result).toEqual({
      ticketId: ticketIdFor('warranty-email', 'email-ticket-retry', '03a-valid-warranty'),
      status: 'open',
    });
    expect(retry.result).toEqual({ ...(first.result as object), replayed: true });
    const tickets = await ticketsOf('email-ticket-retry');
    expect(tickets).toHaveLength(1);
    expect(tickets[0]).toMatchObject({
      issueSummary: 'Does not charge.',
      priority: 'normal',
      customer: 'maria.lopez@example.org',
    });
  });

  it('opens separate tickets for separate executions', async () => {
    const args = { serialNumber: 'SN48213', issueSummary: 'Does not charge.' };
    const a = await attempt(outboxMailer()).execute(
      'create_ticket',
      args,
      toolContext('03a-valid-warranty', undefined, 'email-a'),
    );
    const b = await attempt(outboxMailer()).execute(
      'create_ticket',
      args,
      toolContext('03a-valid-warranty', undefined, 'email-b'),
    );
    expect(a.result).not.toEqual(b.result);
    expect([...(await ticketsOf('email-a')), ...(await ticketsOf('email-b'))]).toHaveLength(2);
  });

  it('is remembered per step, not per execution: another step of the same execution opens its own ticket', async () => {
    const args = { serialNumber: 'SN48213', issueSummary: 'Does not charge.' };
    const a = await attempt(outboxMailer()).execute(
      'create_ticket',
      args,
      toolContext('03a-valid-warranty', undefined, 'email-two-steps'),
    );
    const b = await attempt(outboxMailer()).execute(
      'create_ticket',
      args,
      toolContext('03x-other-step', undefined, 'email-two-steps'),
    );
    expect(b.result).not.toHaveProperty('replayed');
    expect(b.result).not.toEqual(a.result);
    expect(await ticketsOf('email-two-steps')).toHaveLength(2);
  });

  it('keeps the first ticket even when the idempotency record is gone (the store is conditional too), with write access only', async () => {
    const store = dynamoTicketStore(writeOnlyClient(), TICKETS);
    const ticket = storedTicket({ id: 'TKT-TESTTESTTEST', execution: 'email-store' });
    expect(await store.create(ticket)).toEqual(ticket);
    expect(await store.create({ ...ticket, issueSummary: 'second' })).toEqual(ticket);
    expect(await ticketsOf('email-store')).toHaveLength(1);
  });

  it("never hands out another request's ticket when an id collides", async () => {
    const store = dynamoTicketStore(writeOnlyClient(), TICKETS);
    const theirs = storedTicket({
      id: 'TKT-COLLIDE00000',
      execution: 'email-theirs',
      customer: 'someone.else@example.net',
    });
    await store.create(theirs);

    const otherExecution = await failure(
      store.create({ ...theirs, execution: 'email-mine', customer: 'maria.lopez@example.org' }),
    );
    expect(otherExecution).toBeInstanceOf(TicketConflictError);
    expect(otherExecution.message).not.toContain('email-theirs');
    expect(await failure(store.create({ ...theirs, step: '03x-other-step' }))).toBeInstanceOf(TicketConflictError);
    expect(await ticketsOf('email-mine')).toEqual([]);
    expect(await ticketsOf('email-theirs')).toEqual([
      expect.objectContaining({ customer: 'someone.else@example.net' }),
    ]);
  });

  it('reports a collision to the model as a failed create_ticket call, and the engine keeps no ticket id', async () => {
    const ctx = toolContext('03a-valid-warranty', undefined, 'email-collision');
    await dynamoTicketStore(ddb.client, TICKETS).create(
      storedTicket({
        id: ticketIdFor('warranty-email', 'email-collision', '03a-valid-warranty'),
        execution: 'email-else',
      }),
    );
    const call = await attempt(outboxMailer()).execute(
      'create_ticket',
      { serialNumber: 'SN48213', issueSummary: 'Does not charge.' },
      ctx,
    );
    expect(call.error).toMatch(/^TicketConflictError: /);
    expect(call.result).toBeUndefined();
  });
});

describe('send_email', () => {
  it('sends one mail when the step is retried, to the verified sender only', async () => {
    const outbox = outboxMailer();
    const ctx = toolContext('05-send-confirmation', undefined, 'email-mail-retry');
    const first = await attempt(outbox).execute('send_email', { body: 'Your ticket is open.' }, ctx);
    const retry = await attempt(outbox).execute(
      'send_email',
      { body: 'Your ticket is open!', subject: 'Hello again' },
      ctx,
    );
    const refused = await attempt(outbox).execute('send_email', { body: 'x', to: 'someone@else.example' }, ctx);

    expect(retry.result).toEqual({ ...(first.result as object), replayed: true });
    expect(refused.error).toMatch(/^ToolInputError/);
    expect(outbox.sent.map((m) => [m.to, m.body])).toEqual([['maria.lopez@example.org', 'Your ticket is open.']]);
  });

  it('sends one reply per execution: the fallback after a reply step replays the reply instead of sending a hand-off', async () => {
    const outbox = outboxMailer();
    const sent = await attempt(outbox).execute(
      'send_email',
      { body: 'Your ticket is open.' },
      toolContext('05-send-confirmation', undefined, 'email-reply-then-fail'),
    );
    // 05 fails after sending (e.g. an invalid route); the ASL Catch runs the fallback in the same execution.
    const fallback = await attempt(outbox).execute(
      'send_email',
      { body: 'A person will follow up.' },
      toolContext('04-out-of-scope', undefined, 'email-reply-then-fail'),
    );

    expect(fallback.result).toEqual({ ...(sent.result as object), replayed: true });
    expect(outbox.sent.map((m) => [m.step, m.body])).toEqual([['05-send-confirmation', 'Your ticket is open.']]);
    // Another email (execution) still gets its own reply.
    await attempt(outbox).execute(
      'send_email',
      { body: 'A person will follow up.' },
      toolContext('04-out-of-scope', undefined, 'email-other'),
    );
    expect(outbox.sent).toHaveLength(2);
  });

  it('lets the fallback send after the reply step FAILED to send (a failed send is not remembered)', async () => {
    const outbox = outboxMailer();
    const rejecting: Mailer = {
      send: async () =>
        Promise.reject(
          Object.assign(new Error('Address blocked'), { name: 'MessageRejected', $metadata: { httpStatusCode: 400 } }),
        ),
    };
    const failed = await attempt(rejecting).execute(
      'send_email',
      { body: 'Please send the serial.' },
      toolContext('03d-request-serial', undefined, 'email-reply-failed'),
    );
    expect(failed.error).toMatch(/^MessageRejected: Address blocked/);

    const fallback = await attempt(outbox).execute(
      'send_email',
      { body: 'A person will follow up.' },
      toolContext('04-out-of-scope', undefined, 'email-reply-failed'),
    );
    expect(fallback.result).toMatchObject({ sent: true });
    expect(fallback.result).not.toHaveProperty('replayed');
    expect(outbox.sent.map((m) => [m.step, m.body])).toEqual([['04-out-of-scope', 'A person will follow up.']]);
  });

  it('sends again for real after a failed attempt (the failure is not remembered)', async () => {
    const outbox = outboxMailer();
    let calls = 0;
    const flaky: Mailer = {
      send: async (mail) => {
        if (++calls === 1)
          throw Object.assign(new Error('Rate exceeded'), {
            name: 'TooManyRequestsException',
            $metadata: { httpStatusCode: 429 },
          });
        return outbox.send(mail);
      },
    };
    const ctx = toolContext('03c-expired-warranty', undefined, 'email-flaky');
    await expect(attempt(flaky).execute('send_email', { body: 'Paid repair offer.' }, ctx)).rejects.toBeInstanceOf(
      ToolUnavailableError,
    );
    expect((await attempt(flaky).execute('send_email', { body: 'Paid repair offer.' }, ctx)).result).toMatchObject({
      sent: true,
    });
    expect(await attempt(flaky).execute('send_email', { body: 'Paid repair offer.' }, ctx)).toMatchObject({
      result: { sent: true },
    });
    expect(outbox.sent).toHaveLength(1);
    expect(calls).toBe(2);
  });

  it('reports a call still running elsewhere as unavailable, and lets a retry through once its lock expires', async () => {
    const outbox = outboxMailer();
    const stuck: Mailer = { send: () => new Promise(() => {}) }; // an attempt that crashed mid-send
    const ctx = { ...toolContext('03b-device-not-found', undefined, 'email-stuck'), remainingTimeMs: () => 300 };
    void attempt(stuck).execute('send_email', { body: 'Please check the serial.' }, ctx);
    await new Promise((r) => setTimeout(r, 100));
    await expect(attempt(outbox).execute('send_email', { body: 'Please check the serial.' }, ctx)).rejects.toThrow(
      /still running/,
    );
    await new Promise((r) => setTimeout(r, 400));
    expect(
      (await attempt(outbox).execute('send_email', { body: 'Please check the serial.' }, ctx)).result,
    ).toMatchObject({ sent: true });
    expect(outbox.sent).toHaveLength(1);
  });

  it('remembers results with a TTL on expiresAt', async () => {
    const records = (await scan(IDEMPOTENCY)).filter((r) => r.status === 'COMPLETED');
    expect(records.length).toBeGreaterThan(0);
    for (const r of records) {
      expect(r.pk).toBe('IDEMPOTENCY');
      expect(r.sk).toMatch(/^tool#/);
      expect(r.expiresAt).toBeGreaterThan(Date.now() / 1000 + 86_000);
    }
  });
});

describe('check_warranty on WarrantyTable', () => {
  it('reads the registry items written by registryItem', async () => {
    const doc = DynamoDBDocumentClient.from(ddb.client);
    await doc.send(
      new PutCommand({
        TableName: WARRANTY,
        Item: registryItem({ serial: 'sn48213', product: 'Lumen X2 wireless headphones', warrantyEnd: '2099-12-31' }),
      }),
    );
    const registry = dynamoRegistry(ddb.client, WARRANTY);
    expect(await registry.lookup(' Sn48213')).toEqual({
      serial: 'SN48213',
      product: 'Lumen X2 wireless headphones',
      warrantyEnd: '2099-12-31',
    });
    expect(await registry.lookup('SN99999')).toBeUndefined();
  });
});
