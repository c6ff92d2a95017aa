/**
 * The warranty example's own tools without AWS: check_warranty answers from its registry by date, create_ticket
 * opens a ticket for the verified sender with an id derived from (workflow, execution, step), and samples and
 * registry share one serial format. The engine's toolbox is tested in test/runtime/tools/toolbox.test.ts.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  jsonFileRegistry,
  SERIAL_NUMBER,
  type WarrantyRegistry,
  warrantyStatus,
} from '../../../lambdas/workflows/warranty-email/registry.ts';
import { type Ticket, type TicketStore, ticketIdFor } from '../../../lambdas/workflows/warranty-email/tickets.ts';
import { STATEMACHINES_DIR } from '../../../src/core/paths.ts';
import type { CallContext } from '../../../src/runtime/tools/types.ts';
import { outboxMailer } from '../../../src/runtime/triggers/email/mail.ts';
import { toolboxWithoutIdempotency as toolbox, withPorts } from '../../runtime/tools/fixtures.ts';
import { sample, WARRANTY_TOOLS } from './support.ts';

const REGISTRY = join(STATEMACHINES_DIR, 'warranty-email', 'registry.json');
const TODAY = new Date('2026-11-21T12:00:00Z');

/** A tool context of this workflow: the mail of Maria Lopez, execution email-1. */
const ctx = (step: string): CallContext => ({
  workflow: 'warranty-email',
  step,
  execution: { id: 'arn:aws:states:us-east-1:000000000000:execution:warranty-email:email-1', name: 'email-1' },
  input: {
    email: {
      id: 'ses-1',
      messageId: '<CAF7x2q1.valid-warranty.48213@mail.example.org>',
      from: 'maria.lopez@example.org',
      fromName: 'Maria Lopez',
      to: ['claims@dev.warranty.example.com'],
      subject: 'Headphones stopped charging - warranty claim',
      receivedAt: '2026-11-21T09:14:03.000Z',
      bodyChars: 352,
    },
  },
});

interface Ports {
  registry: WarrantyRegistry;
  tickets: TicketStore;
}

/** The warranty tools over test doubles (a registry file, in-memory tickets, an outbox). */
function ports(overrides: Partial<Ports> = {}) {
  const tickets: Ticket[] = [];
  const all: Ports = {
    registry: jsonFileRegistry(REGISTRY),
    tickets: { create: async (t) => (tickets.push(t), t) },
    ...overrides,
  };
  const tools = [
    withPorts(WARRANTY_TOOLS.check_warranty, all.registry),
    withPorts(WARRANTY_TOOLS.create_ticket, all.tickets),
    withPorts(
      WARRANTY_TOOLS.send_email,
      outboxMailer(undefined, () => TODAY),
    ),
  ];
  return { tools, tickets };
}

beforeAll(() => void vi.stubEnv('POWERTOOLS_IDEMPOTENCY_DISABLED', 'true'));
afterAll(() => void vi.unstubAllEnvs());

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

describe('the serial format', () => {
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
