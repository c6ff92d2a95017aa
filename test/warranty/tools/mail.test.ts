import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SendEmailCommand, SESv2Client } from '@aws-sdk/client-sesv2';
import { mockClient } from 'aws-sdk-client-mock';
import { describe, expect, it } from 'vitest';
import { outboxMailer, readOutbox, replySubject, sesMailer, type OutgoingMail } from '../../../lambdas/triggers/email/mail.ts';

const MAIL: OutgoingMail = {
  to: 'maria.lopez@example.org',
  subject: 'Re: Headphones stopped charging',
  body: 'Your ticket is TKT-7Q2M9XKA.',
  inReplyTo: '<CAF7x2q1@mail.example.org>',
  execution: 'email-1',
  step: '05-send-confirmation',
};

describe('sesMailer', () => {
  it('sends a plain-text reply from MAIL_FROM with threading and Auto-Submitted headers', async () => {
    const ses = mockClient(SESv2Client);
    ses.on(SendEmailCommand).resolves({ MessageId: '0100019a-ses-id' });
    expect(await sesMailer(new SESv2Client({ region: 'us-east-1' }), 'claims@warranty.example.com').send(MAIL)).toEqual({ messageId: '0100019a-ses-id' });
    expect(ses.commandCalls(SendEmailCommand).map((c) => c.args[0].input)).toEqual([
      {
        FromEmailAddress: 'claims@warranty.example.com',
        Destination: { ToAddresses: ['maria.lopez@example.org'] },
        Content: {
          Simple: {
            Subject: { Data: 'Re: Headphones stopped charging', Charset: 'UTF-8' },
            Body: { Text: { Data: 'Your ticket is TKT-7Q2M9XKA.', Charset: 'UTF-8' } },
            Headers: [
              { Name: 'In-Reply-To', Value: '<CAF7x2q1@mail.example.org>' },
              { Name: 'References', Value: '<CAF7x2q1@mail.example.org>' },
              { Name: 'Auto-Submitted', Value: 'auto-replied' },
            ],
          },
        },
      },
    ]);
    ses.restore();
  });

  it('sends no threading headers when there is nothing to reply to', async () => {
    const ses = mockClient(SESv2Client);
    ses.on(SendEmailCommand).resolves({ MessageId: 'id' });
    const { inReplyTo: _none, ...unthreaded } = MAIL;
    await sesMailer(new SESv2Client({ region: 'us-east-1' }), 'claims@warranty.example.com').send(unthreaded);
    expect(ses.commandCalls(SendEmailCommand)[0]!.args[0].input.Content?.Simple?.Headers).toEqual([{ Name: 'Auto-Submitted', Value: 'auto-replied' }]);
    ses.restore();
  });
});

describe('outboxMailer', () => {
  it('keeps every mail in memory and appends it to the outbox file', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'outbox-')), 'nested', 'outbox.jsonl');
    const clock = () => new Date('2026-11-21T12:00:00Z');
    const mailer = outboxMailer(file, clock);
    await mailer.send(MAIL);
    await mailer.send({ ...MAIL, step: '03b-device-not-found' });
    expect(readOutbox(file)).toEqual(mailer.sent);
    expect(mailer.sent.map((m) => [m.to, m.step, m.sentAt])).toEqual([
      ['maria.lopez@example.org', '05-send-confirmation', '2026-11-21T12:00:00.000Z'],
      ['maria.lopez@example.org', '03b-device-not-found', '2026-11-21T12:00:00.000Z'],
    ]);
    expect(new Set(mailer.sent.map((m) => m.messageId)).size).toBe(2);
  });

  it('reads a missing outbox as empty', () => {
    expect(readOutbox(join(tmpdir(), 'no-such-outbox.jsonl'))).toEqual([]);
  });
});

describe('replySubject', () => {
  it.each([
    ['Broken screen', 'ignored', 'Re: Broken screen'],
    ['Re: Broken screen', undefined, 'Re: Broken screen'],
    ['RE: Broken screen', undefined, 'RE: Broken screen'],
    ['', 'Your serial number', 'Re: Your serial number'],
    ['  ', undefined, 'Re: Your message'],
  ])('%j with proposal %j → %j', (original, proposed, expected) => {
    expect(replySubject(original, proposed)).toBe(expected);
  });
});
