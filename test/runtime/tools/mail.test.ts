import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SESv2Client, SendEmailCommand } from '@aws-sdk/client-sesv2';
import { mockClient } from 'aws-sdk-client-mock';
import { describe, expect, it } from 'vitest';
import { type OutgoingMail, outboxMailer, readOutbox, replySubject } from '../../../src/runtime/triggers/email/mail.ts';
import { sesMailer } from '../../../src/runtime/triggers/email/ses-mailer.ts';

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
    expect(await sesMailer(new SESv2Client({ region: 'us-east-1' }), 'cases@desk.example.com').send(MAIL)).toEqual({
      messageId: '0100019a-ses-id',
    });
    expect(ses.commandCalls(SendEmailCommand).map((c) => c.args[0].input)).toEqual([
      {
        FromEmailAddress: 'cases@desk.example.com',
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
    await sesMailer(new SESv2Client({ region: 'us-east-1' }), 'cases@desk.example.com').send(unthreaded);
    expect(ses.commandCalls(SendEmailCommand)[0]!.args[0].input.Content?.Simple?.Headers).toEqual([
      { Name: 'Auto-Submitted', Value: 'auto-replied' },
    ]);
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
    ['', 'Your case reference', 'Re: Your case reference'],
    ['  ', undefined, 'Re: Your message'],
  ])('%j with proposal %j → %j', (original, proposed, expected) => {
    expect(replySubject(original, proposed)).toBe(expected);
  });

  it.each([
    // CR/LF from a decoded encoded word, with an injected Bcc line: one line of text remains.
    ['Claim\r\nBcc: everyone@evil.example', 'Re: Claim Bcc: everyone@evil.example'],
    ['Claim\nTo: x@evil.example\r\n\r\nbody', 'Re: Claim To: x@evil.example body'],
    // Bare CR, NUL, Unicode line separators, bidi overrides and zero-width characters.
    ['A\rB\u0000C\u2028D\u202eE\u200bF', 'Re: A B C D E F'],
    // An encoded word that survived decoding (double encoding) is not decoded a second time by the client.
    ['=?UTF-8?Q?Hi=0D=0ABcc:_x@evil.example?=', 'Re: = ?UTF-8?Q?Hi=0D=0ABcc:_x@evil.example?='],
  ])('makes %j one line of inert text', (original, expected) => {
    expect(replySubject(original, undefined)).toBe(expected);
  });

  it('sanitises the proposed subject too (it comes from the model) and caps the length', () => {
    expect(replySubject('', 'Your claim\r\nBcc: x@evil.example')).toBe('Re: Your claim Bcc: x@evil.example');
    const long = replySubject('x'.repeat(5000), undefined);
    expect(long.length).toBeLessThanOrEqual(200);
    expect(long.endsWith('…')).toBe(true);
  });
});

describe('outgoing header fields', () => {
  it('never sends a subject, In-Reply-To or References with a line break, whatever the caller passes', async () => {
    const ses = mockClient(SESv2Client);
    ses.on(SendEmailCommand).resolves({ MessageId: 'id' });
    const mailer = sesMailer(new SESv2Client({ region: 'us-east-1' }), 'cases@desk.example.com');
    await mailer.send({
      ...MAIL,
      subject: 'Re: x\r\nBcc: all@evil.example',
      inReplyTo: '<a@b>\r\nBcc: all@evil.example',
    });
    const simple = ses.commandCalls(SendEmailCommand)[0]!.args[0].input.Content!.Simple!;
    expect(simple.Subject!.Data).toBe('Re: x Bcc: all@evil.example');
    expect(simple.Headers).toEqual([
      { Name: 'In-Reply-To', Value: '<a@b>' },
      { Name: 'References', Value: '<a@b>' },
      { Name: 'Auto-Submitted', Value: 'auto-replied' },
    ]);
    ses.restore();
  });

  it('drops threading when the id is not a valid message id', async () => {
    const ses = mockClient(SESv2Client);
    ses.on(SendEmailCommand).resolves({ MessageId: 'id' });
    await sesMailer(new SESv2Client({ region: 'us-east-1' }), 'cases@desk.example.com').send({
      ...MAIL,
      inReplyTo: 'Bcc: all@evil.example',
    });
    expect(ses.commandCalls(SendEmailCommand)[0]!.args[0].input.Content?.Simple?.Headers).toEqual([
      { Name: 'Auto-Submitted', Value: 'auto-replied' },
    ]);
    ses.restore();
  });

  it('records in the local outbox exactly what SES would send', async () => {
    const mailer = outboxMailer();
    await mailer.send({ ...MAIL, subject: 'Re: x\nBcc: y@evil.example', inReplyTo: 'junk' });
    expect(mailer.sent[0]).toMatchObject({ subject: 'Re: x Bcc: y@evil.example' });
    expect(mailer.sent[0]).not.toHaveProperty('inReplyTo');
  });
});
