/**
 * The warranty example's own stores on DynamoDB Local: its ticket store is conditional (the first ticket stays, a
 * colliding id never hands out another request's ticket) and its registry reads what registryItem wrote. How the
 * engine's toolbox remembers a side effect is tested in test/runtime/tools/toolbox.int.test.ts.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dynamoRegistry, registryItem } from '../../../lambdas/workflows/warranty-email/registry.ts';
import {
  dynamoTicketStore,
  type Ticket,
  TicketConflictError,
  ticketIdFor,
} from '../../../lambdas/workflows/warranty-email/tickets.ts';
import { documentClient } from '../../../src/dynamodb.ts';
import { sessionDynamoDb } from '../../../src/local/cloud/dynamodb-connection.ts';
import type { DynamoDbLocal } from '../../../src/local/cloud/dynamodb-local.ts';
import { dynamoIdempotencyStore } from '../../../src/runtime/tools/once.ts';
import { createToolbox } from '../../../src/runtime/tools/toolbox.ts';
import type { CallContext } from '../../../src/runtime/tools/types.ts';
import { createTable, EMAIL, scanTable, withPorts } from '../../runtime/tools/fixtures.ts';
import { failure } from '../../support/failure.ts';
import { WARRANTY_TOOLS } from './support.ts';

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

/** A fresh "Lambda attempt" of create_ticket over the TicketsTable. */
const attempt = () =>
  createToolbox([withPorts(WARRANTY_TOOLS.create_ticket, dynamoTicketStore(ddb.client, TICKETS))], {
    idempotency: dynamoIdempotencyStore(ddb.client, IDEMPOTENCY),
  });

/** A tool context of this workflow (the verified sender is maria.lopez@example.org). */
const toolContext = (step: string, execution: string): CallContext => ({
  workflow: 'warranty-email',
  step,
  execution: { id: `arn:aws:states:us-east-1:000000000000:execution:warranty-email:${execution}`, name: execution },
  input: { email: { ...EMAIL, from: 'maria.lopez@example.org', fromName: 'Maria Lopez' } },
});

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

const ticketsOf = async (execution: string) =>
  (await scanTable(ddb.client, TICKETS)).filter((t) => t.execution === execution);

describe('create_ticket', () => {
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
    const ctx = toolContext('03a-valid-warranty', 'email-collision');
    await dynamoTicketStore(ddb.client, TICKETS).create(
      storedTicket({
        id: ticketIdFor('warranty-email', 'email-collision', '03a-valid-warranty'),
        execution: 'email-else',
      }),
    );
    const call = await attempt().execute(
      'create_ticket',
      { serialNumber: 'SN48213', issueSummary: 'Does not charge.' },
      ctx,
    );
    expect(call.error).toMatch(/^TicketConflictError: /);
    expect(call.result).toBeUndefined();
  });
});

describe('check_warranty on WarrantyTable', () => {
  it('reads the registry items written by registryItem', async () => {
    const doc = documentClient(ddb.client);
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
