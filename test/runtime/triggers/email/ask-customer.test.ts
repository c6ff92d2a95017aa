/** `ask_customer`: the question goes to the verified sender, in their thread, once per step. */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { dynamoIdempotencyStore } from '../../../../src/runtime/tools/once.ts';
import { createToolbox } from '../../../../src/runtime/tools/toolbox.ts';
import { outboxMailer } from '../../../../src/runtime/triggers/email/mail.ts';
import { askCustomer } from '../../../../src/runtime/triggers/email/send-email.ts';
import { EMAIL, toolContext, withPorts } from '../../tools/fixtures.ts';

const NOW = new Date('2026-11-21T12:00:00Z');

function box() {
  const mailer = outboxMailer(undefined, () => NOW);
  // Never called: idempotency is off in these tests (the toolbox's scope is tested on DynamoDB Local).
  const toolbox = createToolbox([withPorts(askCustomer, mailer)], {
    idempotency: dynamoIdempotencyStore(new DynamoDBClient({ region: 'us-east-1' }), 'unused'),
  });
  return { toolbox, sent: mailer.sent };
}

beforeAll(() => void vi.stubEnv('POWERTOOLS_IDEMPOTENCY_DISABLED', 'true'));
afterAll(() => void vi.unstubAllEnvs());

describe('ask_customer', () => {
  it('asks the verified sender in the thread of the inbound mail and says where it went', async () => {
    const { toolbox, sent } = box();
    const record = await toolbox.execute('ask_customer', { body: 'Which order is it?' }, toolContext('20-ask'));
    expect(record.error).toBeUndefined();
    expect(sent).toEqual([
      expect.objectContaining({
        to: EMAIL.from,
        subject: `Re: ${EMAIL.subject}`,
        body: 'Which order is it?',
        inReplyTo: EMAIL.messageId,
        step: '20-ask',
      }),
    ]);
    expect(record.result).toEqual({ sent: true, to: EMAIL.from, messageId: sent[0]!.messageId });
  });

  it.each([['to'], ['cc'], ['subject']])('refuses a model-supplied %s and sends nothing', async (field) => {
    const { toolbox, sent } = box();
    const record = await toolbox.execute(
      'ask_customer',
      { body: 'hi', [field]: 'attacker@evil.example' },
      toolContext('20-ask'),
    );
    expect(record.error).toMatch(/^ToolInputError: .*Unrecognized key/);
    expect(sent).toEqual([]);
  });

  it('is once per step: a question and a reminder in two steps are two mails', async () => {
    expect(askCustomer.idempotency).toBe('step');
    const { toolbox, sent } = box();
    await toolbox.execute('ask_customer', { body: 'Which order?' }, toolContext('20-ask'));
    await toolbox.execute('ask_customer', { body: 'A reminder: which order?' }, toolContext('22-remind'));
    expect(new Set(sent.map((m) => m.messageId)).size).toBe(2);
  });

  it('refuses an execution the email trigger did not start', async () => {
    const record = await box().toolbox.execute('ask_customer', { body: 'x' }, { ...toolContext('20-ask'), input: {} });
    expect(record.error).toMatch(/ask_customer answers an inbound email/);
  });
});
