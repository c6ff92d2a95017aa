/**
 * Issue 3 acceptance, end to end: the sample .eml files through the real ingress, the synthesized
 * warranty-email ASL in the local runtime, DynamoDB Local (tables from the template) and the
 * offline model. Every sample's trail and status; duplicate delivery; what the event log keeps.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InvalidInputError } from '../../../src/core/errors.ts';
import { readLocalExecution, stepTrail } from '../../../src/local/records/history.ts';
import { expandInputPaths, type RunResult, WorkflowSession } from '../../../src/local/sessions/workflow-session.ts';
import { withHeaders } from '../../runtime/triggers/email/fixtures.ts';
import { mailsOf, SAMPLES_DIR, sample, ticketsOf } from './support.ts';

const S01 = '01-extract-serial';
const S02 = '02-check-warranty';

/** Each sample's expected outcome: the step trail with who decided each step, or the ingress refusal. */
const EXPECTED: Record<
  string,
  ({ status: 'SUCCEEDED' } & { trail: [string, string][] }) | { status: 'REJECTED'; reason: string }
> = {
  'auto-reply.eml': { status: 'REJECTED', reason: 'auto_submitted' },
  // A clear claim (one serial, a fault) is routed by step 01's fast path: `code`, no model call.
  'expired-warranty.eml': {
    status: 'SUCCEEDED',
    trail: [
      [S01, 'code'],
      [S02, 'code'],
      ['03c-expired-warranty', 'offline'],
    ],
  },
  // A short claim with no serial too: 03d still writes the reply with the model.
  'missing-serial.eml': {
    status: 'SUCCEEDED',
    trail: [
      [S01, 'code'],
      ['03d-request-serial', 'offline'],
    ],
  },
  'out-of-scope.eml': {
    status: 'SUCCEEDED',
    trail: [
      [S01, 'offline'],
      ['04-out-of-scope', 'code'],
    ],
  },
  'spam.eml': { status: 'REJECTED', reason: 'spam' },
  'unknown-serial.eml': {
    status: 'SUCCEEDED',
    trail: [
      [S01, 'code'],
      [S02, 'code'],
      ['03b-device-not-found', 'offline'],
    ],
  },
  'valid-warranty.eml': {
    status: 'SUCCEEDED',
    trail: [
      [S01, 'code'],
      [S02, 'code'],
      ['03a-valid-warranty', 'offline'],
      ['05-send-confirmation', 'offline'],
    ],
  },
};
/** Sender and subject of each accepted sample (the reply goes to the sender, in the sender's thread). */
const SENDERS: Record<string, [string, string]> = {
  'expired-warranty.eml': ['j.okafor@example.net', 'Robot vacuum no longer docks'],
  'missing-serial.eml': ['sam.taylor@example.org', 'Broken headphones'],
  'out-of-scope.eml': ['priya.nair@example.com', 'Do you ship to Norway?'],
  'unknown-serial.eml': ['li.wei@example.com', 'Espresso machine leaking water'],
  'valid-warranty.eml': ['maria.lopez@example.org', 'Headphones stopped charging - warranty claim'],
};

let historyDir: string;
let session: WorkflowSession;
let results: RunResult[];
const missing = join(tmpdir(), 'stepwise-no-such-mail.eml');
const byFile = (name: string) => results.find((r) => r.file === join(SAMPLES_DIR, name))!;

beforeAll(async () => {
  historyDir = mkdtempSync(join(tmpdir(), 'stepwise-e2e-history-'));
  session = await WorkflowSession.start({ workflow: 'warranty-email', historyDir, logLevel: 'SILENT' });
  // The directory (every sample, as `--email DIR` expands it), the valid claim delivered again, and a file that is not
  // there.
  results = await session.runFiles([
    ...expandInputPaths([SAMPLES_DIR], ['.eml']),
    join(SAMPLES_DIR, 'valid-warranty.eml'),
    missing,
  ]);
});
afterAll(async () => {
  await session?.close();
  rmSync(historyDir, { recursive: true, force: true });
});

describe('the samples', () => {
  it('are processed in input order: the directory sorted, then the repeat, then the missing file', () => {
    expect(results.map((r) => r.file)).toEqual([
      ...Object.keys(EXPECTED)
        .sort()
        .map((name) => join(SAMPLES_DIR, name)),
      join(SAMPLES_DIR, 'valid-warranty.eml'),
      missing,
    ]);
  });

  it.each(Object.entries(EXPECTED))('%s ends as expected', (name, expected) => {
    const result = byFile(name);
    expect(result.status).toBe(expected.status);
    if (expected.status === 'REJECTED') {
      expect(result.reason).toMatch(new RegExp(`^${expected.reason}: `));
      expect([result.steps, result.toolCalls, result.outbox]).toEqual([[], [], []]);
      return;
    }
    expect(result.steps.map((s) => [s.name, s.decidedBy])).toEqual(expected.trail);
    expect(result.steps.at(-1)!.next).toBe('DONE');
    expect(result.steps.every((s) => s.error === undefined && s.retries === undefined)).toBe(true);
    const [from, subject] = SENDERS[name]!;
    expect(result.outbox).toEqual([{ to: from, subject: `Re: ${subject}`, body: expect.any(String) }]);
    expect(result.toolCalls.filter((c) => c.tool === 'send_email')).toEqual([
      expect.objectContaining({
        step: expected.trail.at(-1)![0],
        result: expect.objectContaining({ sent: true, to: from }),
      }),
    ]);
  });

  it('carries the serial, the warranty and the ticket id from step to step into the confirmation', async () => {
    const result = byFile('valid-warranty.eml');
    const [extract, check, ticket] = result.steps;
    expect(extract!.fields.serialNumber).toBe('SN48213');
    expect(check!.fields.warranty).toMatchObject({
      serialNumber: 'SN48213',
      status: 'valid',
      product: 'Lumen X2 wireless headphones',
    });
    expect(result.toolCalls.map((c) => [c.step, c.tool])).toEqual([
      [S02, 'check_warranty'],
      ['03a-valid-warranty', 'create_ticket'],
      ['05-send-confirmation', 'send_email'],
    ]);
    const ticketId = ticket!.fields.ticketId as string;
    expect(ticketId).toMatch(/^TKT-[0-9A-Z]{12}$/);
    expect(result.outbox[0]!.body).toContain(ticketId);
    expect(await ticketsOf(session, result.executionName!)).toEqual([
      expect.objectContaining({
        id: ticketId,
        serialNumber: 'SN48213',
        customer: 'maria.lopez@example.org',
        step: '03a-valid-warranty',
      }),
    ]);
  });

  it('expands a folder to its inputs, sorted, and refuses a missing path or an empty folder before anything starts', () => {
    expect(expandInputPaths([SAMPLES_DIR], ['.eml'])).toEqual(
      Object.keys(EXPECTED)
        .sort()
        .map((name) => join(SAMPLES_DIR, name)),
    );
    expect(() => expandInputPaths([missing], ['.eml'])).toThrow(InvalidInputError);
    expect(() => expandInputPaths([missing], ['.eml'])).toThrow(/input not found: .*stepwise-no-such-mail\.eml/);
    expect(() => expandInputPaths([historyDir], ['.eml'])).toThrow(/no inputs in .* \(looked for \*\.eml\)/);
  });

  it('reports the model calls and tokens of every step and of the execution (the valid claim: 2 model calls: the fast path decides 01, 03a and 05 route without a route call)', () => {
    const result = byFile('valid-warranty.eml');
    expect(result.steps.map((s) => [s.name, s.usage?.modelCalls])).toEqual([
      [S01, 0],
      [S02, 0],
      ['03a-valid-warranty', 1],
      ['05-send-confirmation', 1],
    ]);
    expect(result.usage).toEqual({
      modelCalls: 2,
      inputTokens: 0,
      outputTokens: 0,
      cacheReadInputTokens: 0,
      cacheWriteInputTokens: 0,
    });
    expect(result.steps[2]!.fields.ticketId).toEqual(expect.any(String));
  });

  it('reports a file that cannot be read as REJECTED with the reason, without stopping the others', () => {
    expect(results.at(-1)).toEqual({
      file: missing,
      messageId: null,
      executionName: null,
      status: 'REJECTED',
      reason: expect.stringMatching(/^unreadable: ENOENT/),
      steps: [],
      toolCalls: [],
      outbox: [],
    });
  });

  it('stores every execution for `stepwise history`', () => {
    const result = byFile('valid-warranty.eml');
    const record = readLocalExecution(result.executionName!, historyDir);
    expect(record.status).toBe('SUCCEEDED');
    expect(stepTrail(record.events).map((s) => s.name)).toEqual(result.steps.map((s) => s.name));
  });
});

describe('duplicate delivery', () => {
  it('runs the workflow once: the repeat is DUPLICATE, with one ticket and one mail in total', async () => {
    const first = byFile('valid-warranty.eml');
    const repeat = results.at(-2)!;
    expect(repeat).toMatchObject({
      status: 'DUPLICATE',
      executionName: first.executionName,
      messageId: first.messageId,
      steps: [],
      outbox: [],
    });
    expect(await ticketsOf(session, first.executionName!)).toHaveLength(1);
    expect(mailsOf(session, first.executionName!)).toHaveLength(1);
  });

  it('recognises a redelivery that a relay changed (same Message-ID, one more Received header)', async () => {
    const first = byFile('valid-warranty.eml');
    const relayed = withHeaders(sample('valid-warranty'), {
      add: ['Received: from relay2.example.org (relay2.example.org [192.0.2.14])'],
    });
    const result = await session.deliverEmail(relayed, 'relayed.eml');
    expect(result).toMatchObject({ status: 'DUPLICATE', executionName: first.executionName });
    expect(await ticketsOf(session, first.executionName!)).toHaveLength(1);
    expect(mailsOf(session, first.executionName!)).toHaveLength(1);
  });
});

describe('the event log', () => {
  it('has the ingress decision, then one StepCompleted per step in order', async () => {
    const result = byFile('valid-warranty.eml');
    const events = await session.events(result.executionName!);
    expect(events.map((e) => (e.type === 'StepCompleted' ? `${e.count}:${e.step}->${e.next}` : e.type))).toEqual([
      'IngressAccepted',
      `1:${S01}->${S02}`,
      `2:${S02}->03a-valid-warranty`,
      '3:03a-valid-warranty->05-send-confirmation',
      '4:05-send-confirmation->DONE',
    ]);
  });

  it('keeps personal data only under `personal`', async () => {
    const result = byFile('valid-warranty.eml');
    const events = await session.events(result.executionName!);
    const ticketId = result.steps[2]!.fields.ticketId;
    // The sender, their name, the subject, the serial number (pii) and text of the body.
    const personal = ['maria.lopez@example.org', 'Maria Lopez', 'Headphones stopped charging', 'SN48213', 'headband'];
    for (const event of events) {
      const { personal: kept, ...rest } = event;
      for (const value of personal)
        expect(JSON.stringify(rest), `${event.type} ${'step' in event ? event.step : ''}`).not.toContain(value);
      expect(kept).toMatchObject({ from: 'maria.lopez@example.org' });
    }
    const steps = events.filter((e) => e.type === 'StepCompleted');
    expect(steps[0]!.personal.fields).toEqual({ serialNumber: 'SN48213' });
    expect(steps[0]!.fields).toEqual({ issueSummary: expect.any(String) });
    expect(steps[1]!.personal.fields).toMatchObject({ warranty: { serialNumber: 'SN48213', status: 'valid' } });
    // Not personal: the ticket id, and the tool arguments the tool declares loggable (product, not the fault text).
    expect(steps[2]!.fields).toEqual({ ticketId });
    expect(steps[2]!.toolCalls).toEqual([
      { tool: 'create_ticket', outcome: 'ok', args: { product: 'Lumen X2 wireless headphones' } },
    ]);
    expect(steps[3]!.personal.reply).toContain(String(ticketId));
  });

  it('records a refused mail with its reason and starts nothing', async () => {
    const result = byFile('spam.eml');
    expect(session.execution(result.executionName!)).toBeUndefined();
    expect(await session.events(result.executionName!)).toEqual([
      expect.objectContaining({
        type: 'IngressRejected',
        reason: 'spam',
        detail: 'spamVerdict: FAIL',
        personal: { from: 'promo@deals.example.biz' },
      }),
    ]);
  });
});
