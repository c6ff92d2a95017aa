import { describe, expect, it } from 'vitest';
import { memoryEventLog } from '../../../../src/runtime/event-log.ts';
import {
  DEFAULT_POLICY,
  executionNameFor,
  localSesMessageId,
  type SesReceipt,
} from '../../../../src/runtime/triggers/email/checks.ts';
import { type IngestDeps, ingest } from '../../../../src/runtime/triggers/email/ingest.ts';
import type { ExecutionStarter, WorkflowInput } from '../../../../src/runtime/triggers/email/starter.ts';
import { memoryEmailStore } from '../../../../src/runtime/triggers/email/store.ts';
import { sample, withHeaders } from './fixtures.ts';

const NOW = new Date('2026-11-21T09:14:03.000Z');
const PASS: SesReceipt = {
  spamVerdict: { status: 'PASS' },
  virusVerdict: { status: 'PASS' },
  spfVerdict: { status: 'PASS' },
  dkimVerdict: { status: 'PASS' },
  dmarcVerdict: { status: 'PASS' },
};

/**
 * A starter with Step Functions' name rule. `sameInputSucceeds` mimics StartExecution on a
 * running Standard execution with identical input: it succeeds again without starting anything.
 */
function fakeStarter(opts: { sameInputSucceeds?: boolean } = {}) {
  const started: Array<{ name: string; input: WorkflowInput }> = [];
  const starter: ExecutionStarter = {
    // Like StartExecution: a same-input success is not proof of a start.
    definitive: false,
    async start(name, input) {
      if (started.some((s) => s.name === name)) return opts.sameInputSucceeds ? 'STARTED' : 'DUPLICATE';
      started.push({ name, input });
      return 'STARTED';
    },
  };
  return { starter, started };
}

function deps(starter: ExecutionStarter, policy = DEFAULT_POLICY): IngestDeps {
  return { emails: memoryEmailStore(), events: memoryEventLog(), starter, policy, clock: () => NOW };
}

describe('ingest', () => {
  it('stores the body, starts the execution with the ingress record, and records IngressAccepted', async () => {
    const { starter, started } = fakeStarter();
    const d = deps(starter);
    const result = await ingest(sample('valid'), PASS, 'ses-id-1', d);

    expect(result).toEqual({ status: 'STARTED', executionName: 'email-ses-id-1' });
    expect(started).toHaveLength(1);
    const { email } = started[0]!.input;
    expect(started[0]!.name).toBe('email-ses-id-1');
    expect(email).toMatchObject({ id: 'ses-id-1', from: 'nora.kent@example.org', receivedAt: NOW.toISOString() });
    // The state carries a pointer, the store the text.
    expect(JSON.stringify(started[0]!.input)).not.toContain('flickers');
    const stored = await d.emails.get('ses-id-1');
    expect(stored?.email).toEqual(email);
    expect(stored?.body).toContain('flickers');
    expect(await d.events.list('email-ses-id-1')).toEqual([
      {
        type: 'IngressAccepted',
        executionName: 'email-ses-id-1',
        at: NOW.toISOString(),
        emailId: 'ses-id-1',
        bodyChars: email.bodyChars,
        personal: { from: 'nora.kent@example.org', subject: 'Desk lamp broken again - C-10001' },
      },
    ]);
  });

  it('refuses with a recorded reason, storing and starting nothing', async () => {
    const { starter, started } = fakeStarter();
    const d = deps(starter);
    const result = await ingest(sample('auto-reply'), PASS, 'ses-id-2', d);

    expect(result).toEqual({
      status: 'REJECTED',
      executionName: 'email-ses-id-2',
      reason: 'auto_submitted',
      detail: 'Auto-Submitted: auto-replied',
    });
    expect(started).toEqual([]);
    expect(await d.emails.get('ses-id-2')).toBeUndefined();
    expect(await d.events.list('email-ses-id-2')).toEqual([
      {
        type: 'IngressRejected',
        executionName: 'email-ses-id-2',
        at: NOW.toISOString(),
        emailId: 'ses-id-2',
        reason: 'auto_submitted',
        detail: 'Auto-Submitted: auto-replied',
        personal: { from: 'nora.kent@example.org' },
      },
    ]);
  });

  it('records malformed and oversized mail without a sender', async () => {
    const d = deps(fakeStarter().starter, { ...DEFAULT_POLICY, maxBytes: 100 });
    await ingest(sample('valid'), PASS, 'big', d);
    await ingest('garbage without headers', PASS, 'bad', d);
    expect((await d.events.list('email-big'))[0]).toMatchObject({ reason: 'too_large', personal: {} });
    expect((await d.events.list('email-bad'))[0]).toMatchObject({ reason: 'malformed_mime', personal: {} });
  });

  it('uses the given SES receipt (AWS) and falls back to the stored headers (local)', async () => {
    const d = deps(fakeStarter().starter);
    expect(await ingest(sample('valid'), { ...PASS, dmarcVerdict: { status: 'FAIL' } }, 'a', d)).toMatchObject({
      reason: 'dmarc_fail',
    });
    expect(await ingest(sample('spam'), undefined, 'b', d)).toMatchObject({ status: 'REJECTED', reason: 'spam' });
    expect(await ingest(sample('valid'), undefined, 'c', d)).toMatchObject({ status: 'STARTED' });
  });

  it('starts nothing new for a redelivery of the same copy (Step Functions refuses the name)', async () => {
    const { starter, started } = fakeStarter();
    const d = deps(starter);
    const raw = sample('valid');
    const id = await localSesMessageId(raw);
    const first = await ingest(raw, undefined, id, d);
    const second = await ingest(raw, undefined, await localSesMessageId(raw), d);

    expect(first).toEqual({ status: 'STARTED', executionName: executionNameFor(id) });
    expect(second).toEqual({ status: 'DUPLICATE', executionName: executionNameFor(id) });
    expect(started).toHaveLength(1);
    expect(await d.events.list(executionNameFor(id))).toHaveLength(1);
  });

  it('starts nothing for the same mail sent again (new SES id, same sender and Message-ID) and records why', async () => {
    const { starter, started } = fakeStarter();
    const d = deps(starter);
    const raw = sample('valid');
    const resent = withHeaders(raw, { add: ['Received: from a.second.hop.example'] });
    const first = await ingest(raw, PASS, 'ses-first', d);
    const second = await ingest(resent, PASS, 'ses-second', d);

    expect(first).toEqual({ status: 'STARTED', executionName: 'email-ses-first' });
    expect(second).toEqual({ status: 'DUPLICATE', executionName: 'email-ses-first', recordedAs: 'email-ses-second' });
    expect(started.map((s) => s.name)).toEqual(['email-ses-first']);
    expect(await d.events.list('email-ses-second')).toEqual([
      {
        type: 'IngressRejected',
        executionName: 'email-ses-second',
        at: NOW.toISOString(),
        emailId: 'ses-second',
        reason: 'duplicate_message_id',
        detail: 'this Message-ID was already delivered as email-ses-first; nothing new started',
        personal: { from: 'nora.kent@example.org' },
      },
    ]);
    expect(await d.emails.get('ses-second')).toBeUndefined();
    // A retry of the re-sent copy is the same decision, recorded once.
    expect(await ingest(resent, PASS, 'ses-second', d)).toEqual(second);
    expect(await d.events.list('email-ses-second')).toHaveLength(1);
  });

  it('lets each sender own its Message-IDs: another sender reusing one is not a duplicate', async () => {
    const { starter, started } = fakeStarter();
    const d = deps(starter);
    const raw = sample('valid');
    const other = withHeaders(raw, { remove: ['From'], add: ['From: someone.else@example.net'] });
    await ingest(raw, PASS, 'ses-a', d);
    expect(await ingest(other, PASS, 'ses-b', d)).toEqual({ status: 'STARTED', executionName: 'email-ses-b' });
    expect(started).toHaveLength(2);
  });

  it('claims no Message-ID for a refused mail, so a later accepted copy still runs', async () => {
    const { starter } = fakeStarter();
    const d = deps(starter);
    const raw = sample('valid');
    expect(await ingest(raw, { ...PASS, spamVerdict: { status: 'FAIL' } }, 'ses-refused', d)).toMatchObject({
      status: 'REJECTED',
      reason: 'spam',
    });
    expect(await ingest(raw, PASS, 'ses-accepted', d)).toEqual({
      status: 'STARTED',
      executionName: 'email-ses-accepted',
    });
  });

  it('dedupes mail without a Message-ID on the SES id only', async () => {
    const { starter, started } = fakeStarter();
    const d = deps(starter);
    const raw = withHeaders(sample('valid'), { remove: ['Message-ID'] });
    await ingest(raw, PASS, 'ses-1', d);
    await ingest(raw, PASS, 'ses-2', d);
    expect(started.map((s) => s.name)).toEqual(['email-ses-1', 'email-ses-2']);
  });

  it('reports DUPLICATE when StartExecution succeeds again for a running execution with the same input', async () => {
    const { starter, started } = fakeStarter({ sameInputSucceeds: true });
    const d = deps(starter);
    expect((await ingest(sample('valid'), PASS, 'same', d)).status).toBe('STARTED');
    expect((await ingest(sample('valid'), PASS, 'same', d)).status).toBe('DUPLICATE');
    expect(started).toHaveLength(1);
  });

  it('records IngressAccepted on redelivery when the first delivery failed after starting', async () => {
    const { starter } = fakeStarter();
    const d = deps(starter);
    const failingEvents = { ...d.events, append: async () => Promise.reject(new Error('events table unavailable')) };
    await expect(ingest(sample('valid'), PASS, 'retry', { ...d, events: failingEvents })).rejects.toThrow(
      'unavailable',
    );
    expect(await ingest(sample('valid'), PASS, 'retry', d)).toEqual({
      status: 'DUPLICATE',
      executionName: 'email-retry',
    });
    expect((await d.events.list('email-retry')).map((e) => e.type)).toEqual(['IngressAccepted']);
  });

  it('keeps the first stored body when a different mail reuses the id', async () => {
    const d = deps(fakeStarter().starter);
    await ingest(sample('valid'), PASS, 'same-id', d);
    await ingest(sample('closed'), PASS, 'same-id', d);
    expect((await d.emails.get('same-id'))?.body).toContain('flickers');
  });
});

describe('ingest of a reply in a thread', () => {
  const FIRST = '<fixture.valid.10001@mail.example.org>';
  /** Nora's answer to our question in her thread: a new mail naming hers in In-Reply-To and References. */
  const reply = (edit: { from?: string; refs?: string[] } = {}) =>
    withHeaders(sample('valid'), {
      remove: ['message-id', 'subject', ...(edit.from ? ['from'] : [])],
      add: [
        ...(edit.from ? [`From: ${edit.from}`] : []),
        'Subject: Re: Desk lamp broken again - C-10001',
        `Message-ID: <answer.${Math.random().toString(36).slice(2)}@mail.example.org>`,
        ...(edit.refs ?? [
          `In-Reply-To: <question.1@outbox.example.com>`,
          `References: ${FIRST} <question.1@outbox.example.com>`,
        ]),
      ],
    });

  function replyDeps() {
    const { starter, started } = fakeStarter();
    const puts: Array<{ detail: unknown; time: string }> = [];
    const d: IngestDeps = {
      ...deps(starter),
      replies: { put: async (detail, time) => void puts.push({ detail, time }) },
    };
    return { d, started, puts };
  }

  it('puts a reply from the thread’s first sender as an Email Reply event, starting nothing', async () => {
    const { d, started, puts } = replyDeps();
    expect(await ingest(sample('valid'), PASS, 'ses-first', d)).toMatchObject({ status: 'STARTED' });
    const result = await ingest(reply(), PASS, 'ses-answer', d);

    expect(result).toEqual({ status: 'REPLIED', executionName: 'email-ses-answer', thread: FIRST });
    expect(started.map((s) => s.name)).toEqual(['email-ses-first']);
    expect(puts).toEqual([
      {
        time: NOW.toISOString(),
        detail: {
          thread: FIRST,
          from: 'nora.kent@example.org',
          subject: 'Re: Desk lamp broken again - C-10001',
          text: expect.stringContaining('flickers'),
          messageId: expect.stringMatching(/^<answer\./),
        },
      },
    ]);
    // Kept like any accepted mail.
    expect((await d.emails.get('ses-answer'))?.email.from).toBe('nora.kent@example.org');
  });

  it('refuses and records a reply naming a known thread from another address: no event, no execution', async () => {
    const { d, started, puts } = replyDeps();
    await ingest(sample('valid'), PASS, 'ses-first', d);
    const result = await ingest(reply({ from: 'Nora Kent <nora.kent@forwarder.example.net>' }), PASS, 'ses-spoof', d);

    expect(result).toMatchObject({ status: 'REJECTED', reason: 'reply_from_other_address' });
    expect(puts).toEqual([]);
    expect(started.map((s) => s.name)).toEqual(['email-ses-first']);
    expect(await d.events.list('email-ses-spoof')).toEqual([
      expect.objectContaining({
        type: 'IngressRejected',
        reason: 'reply_from_other_address',
        personal: { from: 'nora.kent@forwarder.example.net' },
      }),
    ]);
  });

  it('delivers no reply to a thread whose Message-ID another sender’s mail reused', async () => {
    const { d, puts } = replyDeps();
    await ingest(sample('valid'), PASS, 'ses-first', d);
    const reused = withHeaders(sample('missing-ref'), { remove: ['message-id'], add: [`Message-ID: ${FIRST}`] });
    expect(await ingest(reused, PASS, 'ses-reused', d)).toMatchObject({ status: 'STARTED' });
    expect(await ingest(reply(), PASS, 'ses-answer', d)).toMatchObject({
      status: 'REJECTED',
      reason: 'reply_from_other_address',
      detail: expect.stringContaining('two senders'),
    });
    expect(puts).toEqual([]);
  });

  it('starts a new execution for a reply to a thread it does not know, as for any mail', async () => {
    const { d, started, puts } = replyDeps();
    const result = await ingest(reply(), PASS, 'ses-answer', d);
    expect(result).toEqual({ status: 'STARTED', executionName: 'email-ses-answer' });
    expect(started.map((s) => s.name)).toEqual(['email-ses-answer']);
    expect(puts).toEqual([]);
  });

  it('screens a reply like any mail: a refused one is no event', async () => {
    const { d, puts } = replyDeps();
    await ingest(sample('valid'), PASS, 'ses-first', d);
    const result = await ingest(reply(), { ...PASS, dmarcVerdict: { status: 'FAIL' } }, 'ses-answer', d);
    expect(result).toMatchObject({ status: 'REJECTED', reason: 'dmarc_fail' });
    expect(puts).toEqual([]);
  });

  it('starts executions for replies when the workflow waits for none', async () => {
    const { starter, started } = fakeStarter();
    const d = deps(starter);
    await ingest(sample('valid'), PASS, 'ses-first', d);
    expect(await ingest(reply(), PASS, 'ses-answer', d)).toMatchObject({ status: 'STARTED' });
    expect(started).toHaveLength(2);
  });
});
