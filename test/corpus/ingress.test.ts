import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { memoryEventLog } from '../../src/runtime/event-log.ts';
import { STATEMACHINES_DIR } from '../../src/core/paths.ts';
import { renderTemplate } from '../../src/core/template.ts';
import { DEFAULT_POLICY, localSesMessageId } from '../../src/runtime/triggers/email/checks.ts';
import { messageIdOf, MAX_SUBJECT_CHARS } from '../../src/runtime/triggers/email/headers.ts';
import { InboundEmailSchema } from '../../src/definitions/workflow/inbound-email.ts';
import { ingest, type IngestResult } from '../../src/runtime/triggers/email/ingest.ts';
import { replySubject } from '../../src/runtime/triggers/email/mail.ts';
import type { WorkflowInput } from '../../src/runtime/triggers/email/starter.ts';
import { memoryEmailStore } from '../../src/runtime/triggers/email/store.ts';
import { fallbackTemplates } from '../runtime/triggers/email/fixtures.ts';
import { ATTACKS, loadCorpus, type CorpusEmail } from './corpus.ts';

const INBOX = 'claims@dev.warranty.example.com';
const corpus = loadCorpus();
/** The example's fallback step, whose reply templates render the sender's display name. */
const WARRANTY_FALLBACK = join(STATEMACHINES_DIR, 'warranty-email', 'steps', '04-out-of-scope.md');

interface Delivered {
  result: IngestResult;
  started: WorkflowInput[];
  events: Awaited<ReturnType<ReturnType<typeof memoryEventLog>['list']>>;
  body?: string;
}

/** One corpus email through the real parse, checks and ingest, with in-memory stores: a delivery of its own. */
async function deliver(email: CorpusEmail): Promise<Delivered> {
  const started: WorkflowInput[] = [];
  const emails = memoryEmailStore();
  const events = memoryEventLog();
  const result = await ingest(email.raw, undefined, await localSesMessageId(email.raw), {
    emails,
    events,
    starter: { definitive: false, start: async (_name, input) => (started.push(input), 'STARTED') },
    policy: { ...DEFAULT_POLICY, ownAddresses: [INBOX], ...email.policy },
    clock: () => new Date('2026-11-21T09:14:03.000Z'),
  });
  const stored = started[0] && (await emails.get(started[0].email.id));
  return { result, started, events: await events.list(result.executionName), body: stored?.body };
}

const delivered = new Map<string, Delivered>();
beforeAll(async () => {
  for (const email of corpus) delivered.set(email.file, await deliver(email));
});

// Line breaks and the invisible characters used to disguise text, none of which may reach a header.
const UNSAFE_IN_HEADER = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u200b-\u200f\u202a-\u202e\u2066-\u2069]/;

describe('the corpus', () => {
  it('has at least 50 injection and 40 hostile or malformed emails, and every kind of attack', () => {
    expect(corpus.filter((e) => e.category === 'injection').length).toBeGreaterThanOrEqual(50);
    expect(corpus.filter((e) => e.category === 'hostile').length).toBeGreaterThanOrEqual(40);
    expect(new Set(corpus.map((e) => e.attack).filter(Boolean))).toEqual(new Set(ATTACKS));
  });

  it('refuses an email without an expected outcome, and an expectation without an email', () => {
    const dir = mkdtempSync(join(tmpdir(), 'corpus-'));
    mkdirSync(join(dir, 'emails', 'hostile'), { recursive: true });
    writeFileSync(join(dir, 'emails', 'hostile', '001-a.eml'), 'From: a@example.org\r\n\r\nx');
    writeFileSync(join(dir, 'expected.yaml'), '- { file: hostile/001-a.eml, category: hostile, expect: ACCEPTED }\n');
    expect(loadCorpus(dir)).toHaveLength(1);
    writeFileSync(join(dir, 'emails', 'hostile', '002-b.eml'), 'From: a@example.org\r\n\r\nx');
    expect(() => loadCorpus(dir)).toThrow(/hostile\/002-b\.eml: an email without an expected outcome/);
    writeFileSync(join(dir, 'expected.yaml'), '- { file: hostile/001-a.eml, category: hostile, expect: REJECTED bored }\n- { file: hostile/002-b.eml, category: hostile, expect: ACCEPTED }\n');
    expect(() => loadCorpus(dir)).toThrow(/0\.expect: expected "ACCEPTED" or "REJECTED <reason>"/);
    writeFileSync(join(dir, 'expected.yaml'), '- { file: hostile/001-a.eml, category: hostile, expect: ACCEPTED }\n- { file: hostile/002-b.eml, category: hostile, expect: ACCEPTED }\n- { file: hostile/003-c.eml, category: hostile, expect: ACCEPTED }\n');
    expect(() => loadCorpus(dir)).toThrow(/hostile\/003-c\.eml: no such file/);
  });
});

describe.each(corpus.map((e) => [e.file, e] as const))('%s', (file, email) => {
  const expected = email.expect;

  it(`is ${expected.status === 'ACCEPTED' ? 'ACCEPTED' : `REJECTED ${expected.reason}`} at the ingress, with its decision in the event log`, () => {
    const { result, started, events } = delivered.get(file)!;
    if (expected.status === 'ACCEPTED') {
      expect(result).toMatchObject({ status: 'STARTED' });
      expect(started).toHaveLength(1);
      expect(events.map((e) => e.type)).toEqual(['IngressAccepted']);
    } else {
      expect(result).toMatchObject({ status: 'REJECTED', reason: expected.reason });
      expect(started).toEqual([]);
      expect(events).toEqual([expect.objectContaining({ type: 'IngressRejected', reason: expected.reason })]);
    }
  });

  if (expected.status === 'ACCEPTED')
    it('hands the workflow one verified sender and header values that are safe to reuse', () => {
      const { started, body } = delivered.get(file)!;
      const inbound = InboundEmailSchema.parse(started[0]!.email);
      if (email.expectFrom) expect(inbound.from).toBe(email.expectFrom);
      const subject = replySubject(inbound.subject, undefined);
      expect(subject).not.toMatch(UNSAFE_IN_HEADER);
      expect(subject.length).toBeLessThanOrEqual(MAX_SUBJECT_CHARS);
      expect(messageIdOf(inbound.messageId)).toBe(inbound.messageId);
      expect(inbound.fromName ?? '').not.toMatch(UNSAFE_IN_HEADER);
      expect(body!.length).toBeLessThanOrEqual(DEFAULT_POLICY.maxBodyChars + 100);
      // The fallback reply renders no link, address or number the sender put in their display name.
      for (const [, template] of fallbackTemplates(WARRANTY_FALLBACK)) {
        const { value, problems } = renderTemplate(template, { email: inbound }, { untrusted: ['email'] });
        expect(problems).toEqual([]);
        expect(String(value)).not.toMatch(/evil|https?:|555|@/);
      }
    });
});
