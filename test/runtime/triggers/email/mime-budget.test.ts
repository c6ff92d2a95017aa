/**
 * The ingress budget holds before parsing: a message whose structure would make the parser slow
 * and large (MB of empty parts, deep nesting, a header flood, a body of short lines) is refused
 * unparsed as `mime_budget`, and ends with its `IngressRejected` record like any refused mail. A
 * large legitimate message within the budget is still parsed and accepted.
 */
import PostalMime from 'postal-mime';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { memoryEventLog } from '../../../../src/runtime/event-log.ts';
import {
  DEFAULT_POLICY,
  mimeShape,
  parseInbound,
  type SesReceipt,
} from '../../../../src/runtime/triggers/email/checks.ts';
import { ingest } from '../../../../src/runtime/triggers/email/ingest.ts';
import { memoryEmailStore } from '../../../../src/runtime/triggers/email/store.ts';
import { largeAttachment, MIME_BOMBS } from './mime-bombs.ts';

const MiB = 1024 * 1024;
const NOW = new Date('2026-11-21T09:14:03.000Z');
const PASS = { status: 'PASS' } as const;
const RECEIPT: SesReceipt = {
  spamVerdict: PASS,
  virusVerdict: PASS,
  spfVerdict: PASS,
  dkimVerdict: PASS,
  dmarcVerdict: PASS,
};

async function deliver(raw: string) {
  const emails = memoryEmailStore();
  const events = memoryEventLog();
  const started: string[] = [];
  const result = await ingest(raw, RECEIPT, 'ses-bomb-1', {
    emails,
    events,
    starter: { definitive: true, start: async (name) => (started.push(name), 'STARTED') },
    policy: { ...DEFAULT_POLICY, ownAddresses: ['cases@dev.desk.example.com'] },
    clock: () => NOW,
  });
  return { result, events: await events.list(result.executionName), started, stored: await emails.get('ses-bomb-1') };
}

afterEach(() => vi.restoreAllMocks());

describe('the MIME budget', () => {
  it.each(Object.keys(MIME_BOMBS))(
    'refuses 10 MB of %s before parsing it, with an IngressRejected record',
    async (kind) => {
      const parse = vi.spyOn(PostalMime.prototype, 'parse');
      const raw = MIME_BOMBS[kind]!(10 * MiB - 64 * 1024);
      const { result, events, started, stored } = await deliver(raw);
      expect(result).toMatchObject({ status: 'REJECTED', executionName: 'email-ses-bomb-1', reason: 'mime_budget' });
      expect(parse).not.toHaveBeenCalled();
      expect(events).toEqual([
        {
          type: 'IngressRejected',
          executionName: 'email-ses-bomb-1',
          at: NOW.toISOString(),
          emailId: 'ses-bomb-1',
          reason: 'mime_budget',
          detail: expect.stringMatching(/^more than \d+ (lines|MIME part delimiters): not parsed$/),
          personal: {},
        },
      ]);
      expect(started).toEqual([]);
      expect(stored).toBeUndefined();
    },
  );

  it('counts lines and parts on the raw bytes whatever the boundary (any line of -- and a non-blank character), up to the limits', () => {
    const raw = new TextEncoder().encode(
      'a: b\r\n\r\n--x\r\n-- signature\r\n--\r\n---- rule\r\ntext --not\r\n--=_Part_1--\r\n',
    );
    expect(mimeShape(raw)).toEqual({ lines: 9, delimiters: 3 });
    expect(mimeShape(new TextEncoder().encode('--b'))).toEqual({ lines: 1, delimiters: 1 });
    // It stops counting at the first count over its limit: a refusal costs the limit, not the bomb.
    expect(mimeShape(raw, { lines: 3, delimiters: Infinity })).toEqual({ lines: 4, delimiters: 1 });
    expect(mimeShape(raw, { lines: Infinity, delimiters: 1 })).toEqual({ lines: 7, delimiters: 2 });
  });

  it('refuses one delimiter or one line over the limit, and parses at the limit', async () => {
    const parts = (n: number) => MIME_BOMBS['empty parts']!(0).replace('--b--', `${'--b\r\n\r\n'.repeat(n - 1)}--b--`);
    expect(await parseInbound(parts(DEFAULT_POLICY.maxMimeParts), DEFAULT_POLICY)).not.toHaveProperty('rejected');
    expect(await parseInbound(parts(DEFAULT_POLICY.maxMimeParts + 1), DEFAULT_POLICY)).toMatchObject({
      rejected: 'mime_budget',
    });
    expect(await parseInbound('a: b\n\nx', { ...DEFAULT_POLICY, maxMimeLines: 3 })).not.toHaveProperty('rejected');
    expect(await parseInbound('a: b\n\nx\n', { ...DEFAULT_POLICY, maxMimeLines: 3 })).toMatchObject({
      rejected: 'mime_budget',
      detail: 'more than 3 lines: not parsed',
    });
  });

  it('leaves what fits the budget to the parser limits: deep nesting stops at its depth, a header block at its size', async () => {
    expect(await parseInbound(MIME_BOMBS['deep nesting']!(60 * 300), DEFAULT_POLICY)).toMatchObject({
      rejected: 'malformed_mime',
      detail: expect.stringMatching(/nesting depth/),
    });
    const longHeaders = MIME_BOMBS['header flood']!(0).replace(
      '\r\n\r\n',
      `\r\n${`X-Filler: ${'x'.repeat(60)}\r\n`.repeat(20_000)}\r\n`,
    );
    expect(await parseInbound(longHeaders, DEFAULT_POLICY)).toMatchObject({
      rejected: 'malformed_mime',
      detail: expect.stringMatching(/header size/),
    });
  });

  it('accepts a legitimate 10 MB mail: a base64 attachment in 76-character lines is within the budget', async () => {
    const { result, started, stored } = await deliver(largeAttachment(10 * MiB - 64 * 1024));
    expect(result.status).toBe('STARTED');
    expect(started).toEqual(['email-ses-bomb-1']);
    expect(stored?.body).toContain('attached. Case C-10001.');
  });
});
