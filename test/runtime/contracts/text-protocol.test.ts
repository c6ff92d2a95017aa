import { describe, expect, it } from 'vitest';
import { renderTemplate } from '../../../src/core/template.ts';
import {
  fieldLabel,
  parseStepText,
  renderStepText,
  resolveFieldLabel,
} from '../../../src/runtime/contracts/text-protocol.ts';

const outputs = {
  serialNumber: { type: 'string' as const, description: 's', pii: true },
  issueSummary: { type: 'string' as const, description: 'i', pii: false },
  attempts: { type: 'number' as const, description: 'n', pii: false },
  warranty: { type: 'object' as const, description: 'w', pii: false },
};

describe('text protocol', () => {
  it('labels fields in UPPER_SNAKE case and resolves unambiguous leading-word abbreviations', () => {
    expect(fieldLabel('serialNumber')).toBe('SERIAL_NUMBER');
    expect(fieldLabel('ticketId')).toBe('TICKET_ID');
    expect(resolveFieldLabel('SERIAL', ['serialNumber', 'issueSummary'])).toBe('serialNumber');
    expect(resolveFieldLabel('SERIAL_NUMBER', ['serialNumber'])).toBe('serialNumber');
    expect(resolveFieldLabel('SERIAL', ['serialNumber', 'serialPrefix'])).toBeUndefined();
    expect(resolveFieldLabel('SER', ['serialNumber'])).toBeUndefined();
  });

  it('parses label lines, coerces declared types, and lets the last line of a label win', () => {
    const parsed = parseStepText(
      [
        'Thinking: NEXT_STEP could be 03d.',
        'NEXT_STEP: 03d-request-serial',
        '- NEXT_STEP: `02-check-warranty`.',
        'SERIAL: sn12345',
        'REASON: serial found',
        'ATTEMPTS: 2',
        'WARRANTY: {"status":"valid"}',
        'UNKNOWN: x',
      ].join('\n'),
      { outputs },
    );
    expect(parsed).toEqual({
      next: '02-check-warranty',
      reason: 'serial found',
      fields: { serialNumber: 'sn12345', attempts: 2, warranty: { status: 'valid' } },
    });
    expect(parseStepText('no labels here', { outputs })).toEqual({ fields: {} });
  });

  it('renders a step result: routing, fields, tool calls with results or errors, the reply', () => {
    const text = renderStepText({
      next: '05-send-confirmation',
      reason: 'Repair ticket created',
      fields: { ticketId: 'TKT-12345', warranty: { status: 'valid' } },
      toolCalls: [
        { tool: 'create_ticket', args: { serialNumber: 'SN12345' }, result: { ticketId: 'TKT-12345' } },
        { tool: 'send_email', args: { body: 'x' }, error: 'refused' },
      ],
      reply: 'Hello Anna',
    });
    expect(text.split('\n')).toEqual([
      'NEXT_STEP: 05-send-confirmation',
      'REASON: Repair ticket created',
      'TICKET_ID: TKT-12345',
      'WARRANTY: {"status":"valid"}',
      'CALL create_ticket {"serialNumber":"SN12345"} -> {"ticketId":"TKT-12345"}',
      'CALL send_email {"body":"x"} -> ERROR refused',
      'REPLY:',
      'Hello Anna',
    ]);
  });
});

describe('templates', () => {
  const scope = {
    email: { fromName: 'Anna', subject: 'Help' },
    data: { serialNumber: 'sn1', warranty: { product: 'Laptop' } },
    found: {},
  };

  it('fills placeholders, applies filters and defaults', () => {
    const { value, problems } = renderTemplate(
      {
        greeting: 'Hello {{email.fromName}}, about {{ data.warranty.product | upper }}',
        serial: '{{data.serialNumber|upper}}',
        who: '{{email.missing | default: there}}',
      },
      scope,
    );
    expect(value).toEqual({ greeting: 'Hello Anna, about LAPTOP', serial: 'SN1', who: 'there' });
    expect(problems).toEqual([]);
  });

  it('keeps the raw value of a template that is a single placeholder', () => {
    expect(renderTemplate('{{data.warranty}}', scope).value).toEqual({ product: 'Laptop' });
    expect(renderTemplate(['{{data.warranty | json}}'], scope).value).toEqual(['{"product":"Laptop"}']);
  });

  it('reports missing values and unknown filters instead of inventing text', () => {
    const { value, problems } = renderTemplate('Ticket {{data.ticketId}} for {{found.serial | shout}}', scope);
    expect(value).toBe('Ticket  for ');
    expect(problems).toEqual([
      'no value for "data.ticketId"',
      'unknown filter "shout" in {{found.serial | shout}}',
      'no value for "found.serial"',
    ]);
  });
});
