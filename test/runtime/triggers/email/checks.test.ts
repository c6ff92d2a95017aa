import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InboundEmailSchema } from '../../../../src/definitions/workflow/inbound-email.ts';
import {
  DEFAULT_POLICY,
  executionNameFor,
  type IngressPolicy,
  isRejection,
  localSesMessageId,
  type ParsedMail,
  parseInbound,
  type Screening,
  type SesReceipt,
  screen,
  sesReceiptFromHeaders,
  type VerdictStatus,
} from '../../../../src/runtime/triggers/email/checks.ts';
import { htmlToText } from '../../../../src/runtime/triggers/email/html.ts';
import { sample, withHeaders } from './fixtures.ts';

const POLICY: IngressPolicy = { ...DEFAULT_POLICY, ownAddresses: ['cases@dev.desk.example.com'] };
const ENVELOPE = { id: 'ses-message-1', receivedAt: '2026-11-21T09:14:03.000Z' };
const ALL_PASS: SesReceipt = {
  spamVerdict: { status: 'PASS' },
  virusVerdict: { status: 'PASS' },
  spfVerdict: { status: 'PASS' },
  dkimVerdict: { status: 'PASS' },
  dmarcVerdict: { status: 'PASS' },
};

async function parsed(raw: string | Uint8Array, policy = POLICY): Promise<ParsedMail> {
  const result = await parseInbound(raw, policy);
  if (isRejection(result)) throw new Error(`expected a parsed mail, got ${result.rejected}`);
  return result;
}

/** The whole local check: parse, receipt from the headers, screen. */
async function check(raw: string | Uint8Array, policy = POLICY): Promise<Screening> {
  const result = await parseInbound(raw, policy);
  if (isRejection(result)) return result;
  return screen(result, sesReceiptFromHeaders(result.headers), policy, ENVELOPE);
}

const reason = (s: Screening) => (isRejection(s) ? s.rejected : 'accepted');

describe('the samples', () => {
  it.each([
    ['valid', 'accepted'],
    ['closed', 'accepted'],
    ['not-found', 'accepted'],
    ['missing-ref', 'accepted'],
    ['out-of-scope', 'accepted'],
    ['spam', 'spam'],
    ['auto-reply', 'auto_submitted'],
  ])('%s is %s', async (name, expected) => {
    expect(reason(await check(sample(name)))).toBe(expected);
  });

  it('turns an accepted mail into the verified ingress record and its body', async () => {
    const result = await check(sample('valid'));
    if (isRejection(result)) throw new Error(result.rejected);
    expect(result.accepted).toEqual({
      id: 'ses-message-1',
      messageId: '<fixture.valid.10001@mail.example.org>',
      from: 'nora.kent@example.org',
      fromName: 'Nora Kent',
      to: ['cases@dev.desk.example.com'],
      subject: 'Desk lamp broken again - C-10001',
      receivedAt: ENVELOPE.receivedAt,
      bodyChars: result.body.length,
    });
    expect(InboundEmailSchema.parse(result.accepted)).toEqual(result.accepted);
    expect(result.body).toContain('from my case C-10001 is broken again');
    // The text part is used, not the HTML alternative.
    expect(result.body).not.toContain('<');
  });

  it('lower-cases the sender and decodes quoted-printable bodies', async () => {
    const result = await check(sample('closed'));
    if (isRejection(result)) throw new Error(result.rejected);
    expect(result.accepted.from).toBe('omar.haddad@example.net');
    expect(result.body).toContain('damaged \u2013 the clamp cracked');
  });

  it('reads HTML-only mail as text', async () => {
    const result = await check(sample('missing-ref'));
    if (isRejection(result)) throw new Error(result.rejected);
    expect(result.body).toBe(
      'Hi,\n\nThe headset you sent me is faulty \u2013 the microphone cuts out\nevery few seconds. What do I need to do?\n\nThanks,\nSam',
    );
  });
});

describe('sesReceiptFromHeaders', () => {
  it('defaults every verdict to GRAY when SES added no headers', async () => {
    const bare = withHeaders(sample('valid'), {
      remove: ['X-SES-Spam-Verdict', 'X-SES-Virus-Verdict', 'Received-SPF', 'Authentication-Results'],
    });
    const receipt = sesReceiptFromHeaders((await parsed(bare)).headers);
    expect(Object.values(receipt).map((v) => v.status)).toEqual(['GRAY', 'GRAY', 'GRAY', 'GRAY', 'GRAY']);
    // ... and GRAY is no reason to refuse: a hand-written local .eml is processed.
    expect(reason(screen(await parsed(bare), receipt, POLICY, ENVELOPE))).toBe('accepted');
  });

  it.each([
    ['pass', 'PASS'],
    ['fail', 'FAIL'],
    ['softfail', 'GRAY'],
    ['neutral', 'GRAY'],
    ['none', 'GRAY'],
    ['temperror', 'PROCESSING_FAILED'],
    ['permerror', 'PROCESSING_FAILED'],
  ])('maps Received-SPF %s to %s', async (result, status) => {
    const raw = withHeaders(sample('valid'), {
      remove: ['Received-SPF'],
      add: [`Received-SPF: ${result} (spfCheck: test) client-ip=192.0.2.1;`],
    });
    expect(sesReceiptFromHeaders((await parsed(raw)).headers).spfVerdict.status).toBe(status);
  });

  it('reads spf, dkim and dmarc from Authentication-Results, ignoring comments', async () => {
    const raw = withHeaders(sample('valid'), {
      remove: ['Received-SPF', 'Authentication-Results'],
      add: [
        'Authentication-Results: amazonses.com;',
        ' spf=fail (spfCheck: not dkim=pass) smtp.mailfrom=x@example.org;',
        ' dkim=temperror header.i=@example.org;',
        ' dmarc=fail header.from=example.org;',
      ],
    });
    const receipt = sesReceiptFromHeaders((await parsed(raw)).headers);
    expect([receipt.spfVerdict.status, receipt.dkimVerdict.status, receipt.dmarcVerdict.status]).toEqual([
      'FAIL',
      'PROCESSING_FAILED',
      'FAIL',
    ]);
  });

  it('counts a mail with several DKIM signatures as passing when one passes', async () => {
    const raw = withHeaders(sample('valid'), {
      remove: ['Authentication-Results'],
      add: [
        'Authentication-Results: amazonses.com; dkim=fail header.i=@relay.example; dkim=pass header.i=@example.org; dmarc=pass',
      ],
    });
    expect(sesReceiptFromHeaders((await parsed(raw)).headers).dkimVerdict.status).toBe('PASS');
  });

  it('trusts only the topmost copy of a header (SES prepends; lower copies come from the sender)', async () => {
    const forged = withHeaders(sample('spam'), { remove: ['Return-Path'] }).replace(
      'Message-ID:',
      'X-SES-Spam-Verdict: PASS\nMessage-ID:',
    );
    const receipt = sesReceiptFromHeaders((await parsed(forged)).headers);
    expect(receipt.spamVerdict.status).toBe('FAIL');
  });
});

describe('screen: receipt verdicts', () => {
  const cases: Array<[keyof SesReceipt, VerdictStatus, string]> = [
    ['virusVerdict', 'FAIL', 'virus'],
    ['virusVerdict', 'PROCESSING_FAILED', 'virus'],
    ['virusVerdict', 'GRAY', 'accepted'],
    ['spamVerdict', 'FAIL', 'spam'],
    ['spamVerdict', 'GRAY', 'accepted'],
    ['spamVerdict', 'PROCESSING_FAILED', 'accepted'],
    ['spfVerdict', 'FAIL', 'spf_fail'],
    ['spfVerdict', 'GRAY', 'accepted'],
    ['spfVerdict', 'PROCESSING_FAILED', 'accepted'],
    ['dkimVerdict', 'FAIL', 'dkim_fail'],
    ['dkimVerdict', 'GRAY', 'accepted'],
    ['dmarcVerdict', 'FAIL', 'dmarc_fail'],
    ['dmarcVerdict', 'PROCESSING_FAILED', 'accepted'],
  ];
  it.each(cases)('%s %s → %s', async (key, status, expected) => {
    const mail = await parsed(sample('valid'));
    expect(reason(screen(mail, { ...ALL_PASS, [key]: { status } }, POLICY, ENVELOPE))).toBe(expected);
  });

  it.each([
    ['X-SES-Virus-Verdict', 'X-SES-Virus-Verdict: FAIL', 'virus'],
    ['X-SES-Spam-Verdict', 'X-SES-Spam-Verdict: FAIL', 'spam'],
    ['Received-SPF', 'Received-SPF: fail (spfCheck: domain does not designate) client-ip=192.0.2.9;', 'spf_fail'],
  ])('refuses a stored mail whose %s header fails', async (header, line, expected) => {
    expect(reason(await check(withHeaders(sample('valid'), { remove: [header], add: [line] })))).toBe(expected);
  });

  it('names the failed verdict in the detail', async () => {
    const result = screen(
      await parsed(sample('valid')),
      { ...ALL_PASS, dkimVerdict: { status: 'FAIL' } },
      POLICY,
      ENVELOPE,
    );
    expect(result).toEqual({ rejected: 'dkim_fail', detail: 'dkimVerdict: FAIL' });
  });
});

describe('screen: loops, bulk mail and senders', () => {
  const valid = sample('valid');
  it.each([
    ['Auto-Submitted: auto-generated', 'auto_submitted'],
    ['Auto-Submitted: auto-replied', 'auto_submitted'],
    ['Auto-Submitted: no', 'accepted'],
    ['X-Autoreply: yes', 'auto_submitted'],
    ['Precedence: bulk', 'bulk_precedence'],
    ['Precedence: List', 'bulk_precedence'],
    ['Precedence: junk', 'bulk_precedence'],
    ['Precedence: first-class', 'accepted'],
    ['List-Id: <owners.lists.example.org>', 'mailing_list'],
    ['List-Unsubscribe: <mailto:leave@lists.example.org>', 'mailing_list'],
  ])('%s → %s', async (header, expected) => {
    expect(reason(await check(withHeaders(valid, { add: [header] })))).toBe(expected);
  });

  it('refuses an empty Return-Path (a bounce)', async () => {
    expect(reason(await check(withHeaders(valid, { remove: ['Return-Path'], add: ['Return-Path: <>'] })))).toBe(
      'empty_return_path',
    );
  });

  it('accepts a mail without a Return-Path header (nothing says it is a bounce)', async () => {
    expect(reason(await check(withHeaders(valid, { remove: ['Return-Path'] })))).toBe('accepted');
  });

  it('refuses mail from our own address, whatever its case', async () => {
    const own = withHeaders(valid, {
      remove: ['From'],
      add: ['From: Support Desk <CASES@dev.desk.example.com>'],
    });
    expect(reason(await check(own))).toBe('own_address');
  });

  it.each([
    ['a subaddress of ours', 'cases+x@dev.desk.example.com', 'own_address'],
    ['a subaddress in capitals', 'Cases+Loop.1@DEV.desk.example.com', 'own_address'],
    ['another mailbox of our domain', 'nora@dev.desk.example.com', 'accepted'],
    ['a subaddress of another mailbox', 'casesx+a@dev.desk.example.com', 'accepted'],
  ])('mail from %s (%s) is %s', async (_name, from, expected) => {
    expect(reason(await check(withHeaders(valid, { remove: ['From'], add: [`From: <${from}>`] })))).toBe(expected);
  });

  it('refuses mail from our address when our own address is the subaddressed one', async () => {
    const policy = { ...POLICY, ownAddresses: ['cases+desk@dev.desk.example.com'] };
    const own = withHeaders(valid, { remove: ['From'], add: ['From: <cases@dev.desk.example.com>'] });
    expect(reason(await check(own, policy))).toBe('own_address');
  });

  it.each([
    ['no From header', { remove: ['From'] }],
    ['a From group', { remove: ['From'], add: ['From: Team: a@example.org;'] }],
    ['a From without an address', { remove: ['From'], add: ['From: Nora Kent'] }],
  ])('refuses %s as no_sender', async (_name, edit) => {
    expect(reason(await check(withHeaders(valid, edit)))).toBe('no_sender');
  });

  it('checks verdicts before anything else', async () => {
    const both = withHeaders(sample('auto-reply'), {
      remove: ['X-SES-Virus-Verdict'],
      add: ['X-SES-Virus-Verdict: FAIL'],
    });
    expect(reason(await check(both))).toBe('virus');
  });
});

describe('size and malformed MIME', () => {
  it('refuses mail over the limit before parsing it', async () => {
    const raw = sample('valid');
    const bytes = new TextEncoder().encode(raw).byteLength;
    expect(await parseInbound(raw, { maxBytes: bytes - 1 })).toEqual({
      rejected: 'too_large',
      detail: `${bytes} bytes exceeds the limit of ${bytes - 1}`,
    });
    expect(isRejection(await parseInbound(raw, { maxBytes: bytes }))).toBe(false);
  });

  it.each([
    ['an empty message', ''],
    ['text without a header section', 'hello, this is not an email at all'],
    ['binary data', new Uint8Array([0, 1, 2, 255, 254, 0, 13, 10, 13, 10, 1])],
    ['a multipart message without a boundary', 'From: a@example.org\r\nContent-Type: multipart/mixed\r\n\r\nhello'],
    ['parts nested beyond the parser limit', nested(300)],
  ])('refuses %s as malformed_mime', async (_name, raw) => {
    const result = await parseInbound(raw, POLICY);
    expect(isRejection(result) && result.rejected).toBe('malformed_mime');
  });

  it('never throws, whatever the bytes', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 2048 }), async (bytes) => {
        const result = await parseInbound(bytes, POLICY);
        if (!isRejection(result)) screen(result, sesReceiptFromHeaders(result.headers), POLICY, ENVELOPE);
      }),
      { numRuns: 200 },
    );
  });

  function nested(depth: number): string {
    let raw = 'From: a@example.org\r\nContent-Type: multipart/mixed; boundary=b0\r\n\r\n';
    for (let i = 1; i < depth; i++) raw += `--b${i - 1}\r\nContent-Type: multipart/mixed; boundary=b${i}\r\n\r\n`;
    return raw;
  }
});

describe('body length', () => {
  it('cuts long bodies for the model and says so, keeping the full length in bodyChars', async () => {
    const long = 'x'.repeat(500);
    const raw = sample('out-of-scope').replace('Regards,', `${long}\nRegards,`);
    const result = await check(raw, { ...POLICY, maxBodyChars: 100 });
    if (isRejection(result)) throw new Error(result.rejected);
    expect(result.accepted.bodyChars).toBeGreaterThan(500);
    expect(result.body).toBe(
      `${result.body.slice(0, 100)}\n\n[body truncated: showing the first 100 of ${result.accepted.bodyChars} characters]`,
    );
  });
});

describe('attachments', () => {
  /** A mail from a customer with the given attachments (name, type, content). */
  const withAttachments = (files: [string, string, string][]) =>
    [
      'From: Ana <ana@example.org>',
      'To: cases@dev.desk.example.com',
      'Subject: Broken mug',
      'Message-ID: <m1@example.org>',
      'Content-Type: multipart/mixed; boundary=b',
      '',
      '--b',
      'Content-Type: text/plain',
      '',
      'It arrived broken, see the photo and the invoice.',
      ...files.flatMap(([name, type, content]) => [
        '--b',
        `Content-Type: ${type}; name="${name}"`,
        `Content-Disposition: attachment; filename="${name}"`,
        'Content-Transfer-Encoding: base64',
        '',
        Buffer.from(content).toString('base64'),
      ]),
      '--b--',
      '',
    ].join('\r\n');

  it('lists each attachment by name, type and size in the verified record, never its content', async () => {
    const result = await check(
      withAttachments([
        ['invoice.pdf', 'application/pdf', '%PDF-1.4 invoice'],
        ['photo.jpg', 'image/jpeg', 'jpeg bytes'],
      ]),
    );
    if (isRejection(result)) throw new Error(result.rejected);
    expect(result.accepted.attachments).toEqual([
      { name: 'invoice.pdf', contentType: 'application/pdf', bytes: 16 },
      { name: 'photo.jpg', contentType: 'image/jpeg', bytes: 10 },
    ]);
    expect(JSON.stringify(result.accepted)).not.toContain('%PDF');
    expect(InboundEmailSchema.parse(result.accepted)).toEqual(result.accepted);
  });

  it('has no list for a mail without attachments, and lists at most 50 with names cut to 200 characters as header text', async () => {
    const plain = await check(sample('out-of-scope'));
    if (isRejection(plain)) throw new Error(plain.rejected);
    expect(plain.accepted).not.toHaveProperty('attachments');
    const many = await check(
      withAttachments(Array.from({ length: 60 }, (_, i) => [`${'n'.repeat(300)}${i}.txt`, 'text/plain', 'x'])),
    );
    if (isRejection(many)) throw new Error(many.rejected);
    expect(many.accepted.attachments).toHaveLength(50);
    expect(many.accepted.attachments![0]!.name).toBe(`${'n'.repeat(199)}…`);
    expect(InboundEmailSchema.parse(many.accepted)).toEqual(many.accepted);
  });
});

describe('htmlToText', () => {
  it('drops scripts, styles and tags, keeps paragraphs and decodes entities', () => {
    expect(htmlToText('<style>p{}</style><p>A &amp; B&#8217;s</p><script>x()</script><div>C&#x2014;D<br>E</div>')).toBe(
      'A & B\u2019s\nC\u2014D\nE',
    );
  });
});

describe('execution names', () => {
  it('is email-<id> for an SES message id', () => {
    expect(executionNameFor('o3vrnil0e2ic28trm7dfhrc2v0clambda4nbp0g81')).toBe(
      'email-o3vrnil0e2ic28trm7dfhrc2v0clambda4nbp0g81',
    );
  });

  it('is always a valid, stable Step Functions name', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 300 }), (id) => {
        const name = executionNameFor(id);
        expect(name).toMatch(/^[A-Za-z0-9_-]{1,80}$/);
        expect(executionNameFor(id)).toBe(name);
      }),
    );
  });

  it('does not collide for ids that differ only in characters Step Functions refuses', () => {
    expect(executionNameFor('a/b')).not.toBe(executionNameFor('a:b'));
  });
});

describe('localSesMessageId', () => {
  it('is one id per stored copy, as SES assigns them: the same bytes again, the same id; a copy that differs, a new one', async () => {
    const raw = sample('valid');
    const resent = withHeaders(raw, {
      add: ['Received: from another.hop.example (another.hop.example [192.0.2.200])'],
    });
    expect(await localSesMessageId(raw)).toBe(await localSesMessageId(raw));
    expect(await localSesMessageId(new TextEncoder().encode(raw))).toBe(await localSesMessageId(raw));
    expect(await localSesMessageId(resent)).not.toBe(await localSesMessageId(raw));
    expect(await localSesMessageId(raw)).toMatch(/^[a-f0-9]{40}$/);
  });
});

describe('exactly one From', () => {
  const valid = sample('valid');
  // The attack of the issue: the attacker's From on top, the customer's below, SES's DMARC pass for the customer's domain.
  const twoFrom = withHeaders(valid, {
    remove: ['Authentication-Results'],
    add: [
      'Authentication-Results: amazonses.com; spf=pass smtp.mailfrom=nora.kent@example.org; dkim=pass header.i=@example.org; dmarc=pass header.from=example.org;',
      'From: Billing <attacker@evil.example>',
    ],
  });

  it('refuses two From headers, whichever DMARC passed', async () => {
    const result = await check(twoFrom);
    expect(isRejection(result) && [result.rejected, result.detail]).toEqual([
      'multiple_from',
      '2 From headers with 2 addresses; exactly one is required',
    ]);
    expect((await parsed(twoFrom)).from).toBeUndefined();
  });

  it.each([
    ['two addresses in one From', 'From: nora.kent@example.org, attacker@evil.example'],
    ['a group with two members', 'From: Team: nora.kent@example.org, attacker@evil.example;'],
    ['the same address twice', 'From: nora.kent@example.org, Nora <nora.kent@example.org>'],
  ])('refuses %s', async (_name, header) => {
    expect(reason(await check(withHeaders(valid, { remove: ['From'], add: [header] })))).toBe('multiple_from');
  });

  it('refuses two From headers even when the receipt is from SES (the AWS path)', async () => {
    expect(reason(screen(await parsed(twoFrom), ALL_PASS, POLICY, ENVELOPE))).toBe('multiple_from');
  });

  it('reads a DMARC result for another header.from domain as no verdict, not as a pass', async () => {
    const other = withHeaders(valid, {
      remove: ['Authentication-Results', 'From'],
      add: [
        'Authentication-Results: amazonses.com; dmarc=pass header.from=example.org;',
        'From: attacker@evil.example',
      ],
    });
    const mail = await parsed(other);
    expect(sesReceiptFromHeaders(mail.headers, mail.from?.address).dmarcVerdict.status).toBe('GRAY');
    expect(sesReceiptFromHeaders(mail.headers, 'nora.kent@example.org').dmarcVerdict.status).toBe('PASS');
  });
});

describe('automatic mail: auto-replies and bounces (RFC 3834 and vendor practice)', () => {
  const valid = sample('valid');
  it.each([
    ['Precedence: auto_reply', 'auto_submitted'],
    ['Auto-Submitted: auto-notified', 'auto_submitted'],
    ['Auto-Submitted: No', 'accepted'],
    ['X-Autorespond: vacation', 'auto_submitted'],
    ['X-Auto-Response-Suppress: All', 'auto_submitted'],
    ['X-Auto-Response-Suppress: DR, OOF, AutoReply', 'auto_submitted'],
    ['X-Auto-Response-Suppress: DR, NDR', 'accepted'],
    ['List-Post: <mailto:owners@lists.example.org>', 'mailing_list'],
  ])('%s → %s', async (header, expected) => {
    expect(reason(await check(withHeaders(valid, { add: [header] })))).toBe(expected);
  });

  it.each([
    'Automatic reply: Desk lamp broken again',
    'Out of Office: Desk lamp broken again',
    'AutoReply: away',
    'Abwesenheitsnotiz: Schreibtischlampe',
    'Automatische Antwort: Schreibtischlampe',
    'Réponse automatique : lampe de bureau',
    'Respuesta automática: lámpara de escritorio',
    'Risposta automatica: lampada da scrivania',
    'Automatisch antwoord: bureaulamp',
    'Resposta automática: luminária de mesa',
    'Autosvar: skrivbordslampa',
    'Automatyczna odpowiedź: lampka biurkowa',
    'Автоответ: настольная лампа',
    '自动回复: 台灯',
    '自動応答: デスクランプ',
  ])('refuses the subject %j of an unmarked auto-reply', async (subject) => {
    expect(
      reason(
        await check(
          withHeaders(valid, {
            remove: ['Subject'],
            add: [`Subject: =?UTF-8?B?${Buffer.from(subject).toString('base64')}?=`],
          }),
        ),
      ),
    ).toBe('auto_submitted');
  });

  it.each([
    'Undeliverable: Desk lamp',
    'Undelivered Mail Returned to Sender',
    'Delivery Status Notification (Failure)',
    'Mail delivery failed: returning message to sender',
    'Unzustellbar: Schreibtischlampe',
  ])('refuses the bounce subject %j', async (subject) => {
    expect(reason(await check(withHeaders(valid, { remove: ['Subject'], add: [`Subject: ${subject}`] })))).toBe(
      'bounce',
    );
  });

  it.each([
    'Re: Automatic reply: Desk lamp',
    'Outstanding repair for my desk lamp',
    'Absence of light from the desk lamp',
    'My order arrived undelivered? No, broken',
  ])('accepts the subject %j a person wrote', async (subject) => {
    expect(reason(await check(withHeaders(valid, { remove: ['Subject'], add: [`Subject: ${subject}`] })))).toBe(
      'accepted',
    );
  });

  it.each([
    [
      'a MAILER-DAEMON sender',
      { remove: ['From'], add: ['From: Mail Delivery System <MAILER-DAEMON@mx.example.org>'] },
    ],
    ['a postmaster sender', { remove: ['From'], add: ['From: postmaster@example.org'] }],
    ['a MAILER-DAEMON Return-Path', { remove: ['Return-Path'], add: ['Return-Path: <mailer-daemon@mx.example.org>'] }],
    [
      'a delivery-status report',
      { remove: ['Content-Type'], add: ['Content-Type: multipart/report; report-type=delivery-status; boundary="b1"'] },
    ],
    [
      'a read receipt',
      {
        remove: ['Content-Type'],
        add: ['Content-Type: multipart/report; report-type=disposition-notification; boundary="b1"'],
      },
    ],
  ])('refuses %s as a bounce', async (_name, edit) => {
    expect(reason(await check(withHeaders(valid, edit)))).toBe('bounce');
  });
});

describe('parse budget', () => {
  it('refuses a mail whose parsing ran over the budget, with the measured time', async () => {
    let t = 0;
    const now = () => (t += 30_000);
    expect(await parseInbound(sample('valid'), { ...POLICY, parseBudgetMs: 20_000, now })).toEqual({
      rejected: 'parse_budget',
      detail: 'parsing took 30000 ms, over the budget of 20000 ms',
    });
  });

  it('accepts a parse within the budget', async () => {
    let t = 0;
    expect(
      isRejection(await parseInbound(sample('valid'), { ...POLICY, parseBudgetMs: 20_000, now: () => (t += 10_000) })),
    ).toBe(false);
  });
});

describe('header values the reply reuses', () => {
  it('keeps only a valid Message-ID, never what follows it', async () => {
    const raw = withHeaders(sample('valid'), {
      remove: ['Message-ID'],
      add: ['Message-ID: <a1@mail.example.org> <b2@evil.example>'],
    });
    expect((await parsed(raw)).messageId).toBe('<a1@mail.example.org>');
    const encoded = withHeaders(sample('valid'), {
      remove: ['Message-ID'],
      add: ['Message-ID: =?UTF-8?Q?<x@y>=0D=0ABcc:_all@evil.example?='],
    });
    expect((await parsed(encoded)).messageId).toBe('<x@y>');
    for (const id of ['<no at sign>', '<a b@c>', 'a@b', '<a@b@c>'])
      expect(
        (await parsed(withHeaders(sample('valid'), { remove: ['Message-ID'], add: [`Message-ID: ${id}`] }))).messageId,
      ).toBe('');
  });

  it('stores the display name as one line of text', async () => {
    const raw = withHeaders(sample('valid'), {
      remove: ['From'],
      add: ['From: =?UTF-8?Q?Nora=0D=0ABcc=3A_x=40evil.example?= <nora.kent@example.org>'],
    });
    expect((await parsed(raw)).from).toEqual({ address: 'nora.kent@example.org', name: 'Nora Bcc: x@evil.example' });
  });

  it('refuses a display name whose encoded word hides a group', async () => {
    const raw = withHeaders(sample('valid'), {
      remove: ['From'],
      add: ['From: =?UTF-8?Q?Nora=0D=0ABcc:_x@evil.example?= <nora.kent@example.org>'],
    });
    expect(reason(await check(raw))).toBe('no_sender');
  });
});
