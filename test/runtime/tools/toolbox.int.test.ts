/**
 * Side-effecting tools against DynamoDB Local: a retried step files one follow-up (open_case of the fixture's
 * case-desk workflow, remembered per step), an execution sends one mail (whichever steps try). Each "retry" uses a
 * fresh toolbox and fresh adapters, as a new Lambda attempt would.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ToolUnavailableError } from '../../../src/core/errors.ts';
import { documentClient } from '../../../src/dynamodb.ts';
import { sessionDynamoDb } from '../../../src/local/cloud/dynamodb-connection.ts';
import type { DynamoDbLocal } from '../../../src/local/cloud/dynamodb-local.ts';
import { dynamoIdempotencyStore } from '../../../src/runtime/tools/once.ts';
import { createToolbox, type ToolboxOptions } from '../../../src/runtime/tools/toolbox.ts';
import { type Mailer, outboxMailer } from '../../../src/runtime/triggers/email/mail.ts';
import { createTable, DESK_TOOLS, scanTable, toolContext, withPorts } from './fixtures.ts';

let ddb: DynamoDbLocal;
/** This file's tables on the suite's shared emulator (named after the connection's prefix). */
let CASES: string;
let IDEMPOTENCY: string;

beforeAll(async () => {
  ddb = await sessionDynamoDb();
  [CASES, IDEMPOTENCY] = ['Cases', 'Idempotency'].map((name) => `${ddb.tablePrefix}${name}`);
  await Promise.all([createTable(ddb.client, CASES), createTable(ddb.client, IDEMPOTENCY, 'expiresAt')]);
});
afterAll(async () => ddb?.stop());

/** A fresh "Lambda attempt": new adapters over the same tables and outbox. */
function attempt(mailer: Mailer, opts: ToolboxOptions = {}) {
  const tools = [
    withPorts(DESK_TOOLS.open_case, { doc: documentClient(ddb.client), table: CASES }),
    withPorts(DESK_TOOLS.send_email, mailer),
  ];
  return createToolbox(tools, { idempotency: dynamoIdempotencyStore(ddb.client, IDEMPOTENCY), ...opts });
}

/** The follow-ups open_case wrote under the ids of these results. */
const followUps = async (...results: unknown[]) => {
  const keys = results.map((r) => `FOLLOWUP#${(r as { caseId: string }).caseId}`);
  return (await scanTable(ddb.client, CASES)).filter((item) => keys.includes(item.pk));
};

describe('open_case (idempotency: step)', () => {
  /** open_case in a fresh attempt, in `step` of `execution`. */
  const fileFollowUp = (execution: string, step = '03a-open-case') =>
    attempt(outboxMailer()).execute(
      'open_case',
      { caseRef: 'C-10001', summary: 'Does not switch on.' },
      toolContext(step, undefined, execution),
    );

  it('files one follow-up when the step is retried, and the retry gets the first result', async () => {
    const ctx = toolContext('03a-open-case', undefined, 'email-case-retry');
    const outbox = outboxMailer();
    const first = await attempt(outbox).execute(
      'open_case',
      { caseRef: 'C-10001', summary: 'Does not switch on.' },
      ctx,
    );
    // The model words it differently on the retry: still the same follow-up, nothing written.
    const retry = await attempt(outbox).execute(
      'open_case',
      { caseRef: 'C-10001', summary: 'Will not switch on at all.', priority: 'high' },
      ctx,
    );

    expect(first.result).toEqual({ caseId: expect.stringMatching(/^CASE-[0-9A-F]{10}$/), status: 'filed' });
    expect(retry.result).toEqual({ ...(first.result as object), replayed: true });
    const filed = await followUps(first.result);
    expect(filed).toHaveLength(1);
    expect(filed[0]).toMatchObject({ summary: 'Does not switch on.', customer: 'nora.kent@example.org' });
    expect(filed[0]).not.toHaveProperty('priority');
  });

  it('files separate follow-ups for separate executions', async () => {
    const a = await fileFollowUp('email-a');
    const b = await fileFollowUp('email-b');
    expect(a.result).not.toEqual(b.result);
    expect(await followUps(a.result, b.result)).toHaveLength(2);
  });

  it('is remembered per step, not per execution: another step of the same execution files its own follow-up', async () => {
    const a = await fileFollowUp('email-two-steps');
    const b = await fileFollowUp('email-two-steps', '03x-other-step');
    expect(b.result).not.toHaveProperty('replayed');
    expect(b.result).not.toEqual(a.result);
    expect(await followUps(a.result, b.result)).toHaveLength(2);
  });
});

describe('send_email', () => {
  it('sends one mail when the step is retried, to the verified sender only', async () => {
    const outbox = outboxMailer();
    const ctx = toolContext('05-confirm', undefined, 'email-mail-retry');
    const first = await attempt(outbox).execute('send_email', { body: 'Your follow-up is filed.' }, ctx);
    const retry = await attempt(outbox).execute(
      'send_email',
      { body: 'Your follow-up is filed!', subject: 'Hello again' },
      ctx,
    );
    const refused = await attempt(outbox).execute('send_email', { body: 'x', to: 'someone@else.example' }, ctx);

    expect(retry.result).toEqual({ ...(first.result as object), replayed: true });
    expect(refused.error).toMatch(/^ToolInputError/);
    expect(outbox.sent.map((m) => [m.to, m.body])).toEqual([['nora.kent@example.org', 'Your follow-up is filed.']]);
  });

  it('sends one reply per execution: the fallback after a reply step replays the reply instead of sending a hand-off', async () => {
    const outbox = outboxMailer();
    const sent = await attempt(outbox).execute(
      'send_email',
      { body: 'Your follow-up is filed.' },
      toolContext('05-confirm', undefined, 'email-reply-then-fail'),
    );
    // 05 fails after sending (e.g. an invalid route); the ASL Catch runs the fallback in the same execution.
    const fallback = await attempt(outbox).execute(
      'send_email',
      { body: 'A person will follow up.' },
      toolContext('04-hand-off', undefined, 'email-reply-then-fail'),
    );

    expect(fallback.result).toEqual({ ...(sent.result as object), replayed: true });
    expect(outbox.sent.map((m) => [m.step, m.body])).toEqual([['05-confirm', 'Your follow-up is filed.']]);
    // Another email (execution) still gets its own reply.
    await attempt(outbox).execute(
      'send_email',
      { body: 'A person will follow up.' },
      toolContext('04-hand-off', undefined, 'email-other'),
    );
    expect(outbox.sent).toHaveLength(2);
  });

  it('lets the fallback send after the reply step FAILED to send (a failed send is not remembered)', async () => {
    const outbox = outboxMailer();
    const rejecting: Mailer = {
      send: async () =>
        Promise.reject(
          Object.assign(new Error('Address blocked'), { name: 'MessageRejected', $metadata: { httpStatusCode: 400 } }),
        ),
    };
    const failed = await attempt(rejecting).execute(
      'send_email',
      { body: 'Please send the case reference.' },
      toolContext('03c-ask-ref', undefined, 'email-reply-failed'),
    );
    expect(failed.error).toMatch(/^MessageRejected: Address blocked/);

    const fallback = await attempt(outbox).execute(
      'send_email',
      { body: 'A person will follow up.' },
      toolContext('04-hand-off', undefined, 'email-reply-failed'),
    );
    expect(fallback.result).toMatchObject({ sent: true });
    expect(fallback.result).not.toHaveProperty('replayed');
    expect(outbox.sent.map((m) => [m.step, m.body])).toEqual([['04-hand-off', 'A person will follow up.']]);
  });

  it('sends again for real after a failed attempt (the failure is not remembered)', async () => {
    const outbox = outboxMailer();
    let calls = 0;
    const flaky: Mailer = {
      send: async (mail) => {
        if (++calls === 1)
          throw Object.assign(new Error('Rate exceeded'), {
            name: 'TooManyRequestsException',
            $metadata: { httpStatusCode: 429 },
          });
        return outbox.send(mail);
      },
    };
    const ctx = toolContext('03b-not-found', undefined, 'email-flaky');
    await expect(
      attempt(flaky).execute('send_email', { body: 'We could not find that case.' }, ctx),
    ).rejects.toBeInstanceOf(ToolUnavailableError);
    expect(
      (await attempt(flaky).execute('send_email', { body: 'We could not find that case.' }, ctx)).result,
    ).toMatchObject({
      sent: true,
    });
    expect(await attempt(flaky).execute('send_email', { body: 'We could not find that case.' }, ctx)).toMatchObject({
      result: { sent: true },
    });
    expect(outbox.sent).toHaveLength(1);
    expect(calls).toBe(2);
  });

  it('reports a call still running elsewhere as unavailable, and lets a retry through once its lock expires', async () => {
    const outbox = outboxMailer();
    const stuck: Mailer = { send: () => new Promise(() => {}) }; // an attempt that crashed mid-send
    const ctx = { ...toolContext('03b-not-found', undefined, 'email-stuck'), remainingTimeMs: () => 300 };
    void attempt(stuck).execute('send_email', { body: 'Please check the reference.' }, ctx);
    await new Promise((r) => setTimeout(r, 100));
    await expect(attempt(outbox).execute('send_email', { body: 'Please check the reference.' }, ctx)).rejects.toThrow(
      /still running/,
    );
    await new Promise((r) => setTimeout(r, 400));
    expect(
      (await attempt(outbox).execute('send_email', { body: 'Please check the reference.' }, ctx)).result,
    ).toMatchObject({ sent: true });
    expect(outbox.sent).toHaveLength(1);
  });

  it('remembers results with a TTL on expiresAt', async () => {
    const records = (await scanTable(ddb.client, IDEMPOTENCY)).filter((r) => r.status === 'COMPLETED');
    expect(records.length).toBeGreaterThan(0);
    for (const r of records) {
      expect(r.pk).toBe('IDEMPOTENCY');
      expect(r.sk).toMatch(/^tool#/);
      expect(r.expiresAt).toBeGreaterThan(Date.now() / 1000 + 86_000);
    }
  });
});
