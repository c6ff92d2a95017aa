/**
 * A question and its answer by email, end to end in a local session of the fixture's reply-wait
 * workflow: a mail makes the workflow ask the sender for their account with `ask_customer` (to the
 * verified sender, in the thread) and pause at its event step; the sender's reply `.eml`,
 * through the real ingress, becomes an `Email Reply` event that resumes that execution. A reply
 * naming the thread from another address is refused and recorded, resuming nothing; a reply once
 * the execution waits for nothing more is recorded as an unmatched event. The thread outlives the
 * session, so a reply delivered by a later `stepwise run` finds it too.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadWorkflow } from '../../../src/definitions/workflow/loader.ts';
import { recordingThreads } from '../../../src/local/records/recorded-emails.ts';
import { fileLedger } from '../../../src/local/sessions/event-waits.ts';
import { type RunResult, WorkflowSession } from '../../../src/local/sessions/workflow-session.ts';
import { readOutbox } from '../../../src/runtime/triggers/email/mail.ts';
import { memoryEmailStore } from '../../../src/runtime/triggers/email/store.ts';
import { withHeaders } from '../../runtime/triggers/email/fixtures.ts';
import { useTempDirs } from '../../support/tmp.ts';

const dir = useTempDirs('stepwise-email-reply-')();
const eventsFile = join(dir, 'events.jsonl');
const samples = join(loadWorkflow('reply-wait').dir, 'samples');
const THREAD = '<fixture.ask.7731@mail.example.com>';
let session: WorkflowSession;
let asked: RunResult;

beforeAll(async () => {
  session = await WorkflowSession.start({
    workflow: 'reply-wait',
    logLevel: 'SILENT',
    historyDir: join(dir, 'executions'),
    pausesDir: join(dir, 'pauses'),
    emailsDir: join(dir, 'emails'),
    eventsFile,
  });
  asked = await session.deliverFile(join(samples, 'ask.eml'));
}, 180_000);
afterAll(() => session?.close());

const reply = readFileSync(join(samples, 'reply.eml'), 'utf8');
const replyAs = (messageId: string, from?: string) =>
  withHeaders(reply, {
    remove: ['message-id', ...(from ? ['from'] : [])],
    add: [`Message-ID: ${messageId}`, ...(from ? [`From: ${from}`] : [])],
  });

describe('a reply in the thread', () => {
  it('asks the verified sender in the thread and pauses at the event step', () => {
    expect(asked.status).toBe('PAUSED');
    const question = asked.toolCalls.find((c) => c.tool === 'ask_customer');
    expect(question?.result).toMatchObject({ sent: true, to: 'jonas.weber@example.com' });
    const sent = readOutbox(session.outboxFile).filter((m) => m.execution === asked.executionName);
    expect(sent).toEqual([expect.objectContaining({ to: 'jonas.weber@example.com', inReplyTo: THREAD })]);
  });

  it('refuses a reply naming the thread from another address, and resumes nothing', async () => {
    const spoofed = await session.deliverEmail(
      replyAs('<spoofed.1@mail.example.net>', 'Jonas Weber <jonas.weber@example.net>'),
      'spoofed.eml',
    );
    expect(spoofed.status).toBe('REJECTED');
    expect(spoofed.reason).toMatch(/^reply_from_other_address: /);
    expect(session.pausedExecutions().map((p) => p.execution)).toContain(asked.executionName);
  });

  it('resumes the execution that asked with the reply from the customer', async () => {
    const answered = await session.deliverFile(join(samples, 'reply.eml'));
    expect(answered.executionName).toBe(asked.executionName);
    expect(answered.status).not.toBe('REJECTED');
    expect(session.pausedExecutions().map((p) => p.execution)).not.toContain(asked.executionName);
    expect(fileLedger(eventsFile).read()).toEqual([
      expect.objectContaining({ source: 'stepwise.email', detailType: 'Email Reply', key: THREAD, outcome: 'resumed' }),
    ]);
  });

  it('records a later reply as an unmatched event, starting nothing', async () => {
    const late = await session.deliverEmail(replyAs('<fixture.again.7731@mail.example.com>'), 'again.eml');
    expect(late.status).toBe('REJECTED');
    expect(late.reason).toMatch(/resumed nothing \(already-resumed\)/);
    expect(fileLedger(eventsFile).read().at(-1)).toMatchObject({ outcome: 'unmatched', reason: 'already-resumed' });
  });

  it('keeps the thread for a later session, whose DynamoDB Local is empty', async () => {
    const later = recordingThreads(memoryEmailStore(), join(dir, 'emails', 'threads'));
    expect(await later.thread(THREAD)).toMatchObject({ from: 'jonas.weber@example.com', contested: false });
  });
});
