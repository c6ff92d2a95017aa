/**
 * The order-support samples end to end on the local runtime: the .eml files (with their MIME
 * attachments) through the real ingress, the synthesized ASL with its Map, Parallel, event and
 * workflow steps, the order-ticket child in the same session, and the customer's reply delivered
 * as the email trigger delivers it: a `stepwise.email` "Email Reply" event keyed by the thread.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadWorkflow } from '../../../src/definitions/workflow/loader.ts';
import { stepTrail } from '../../../src/local/history.ts';
import { type RunResult, WorkflowSession } from '../../../src/local/workflow-session.ts';
import { readOutbox } from '../../../src/runtime/triggers/email/mail.ts';

const SAMPLES = join(loadWorkflow('order-support').dir, 'samples');
const THREAD = '<20261124.lamp.31882@mail.example.com>';
const reply = {
  source: 'stepwise.email',
  detailType: 'Email Reply',
  detail: {
    thread: THREAD,
    from: 'tom.berg@example.com',
    subject: 'Re: Lamp arrived damaged',
    text: 'Hi, sorry - the order number is ORD-104871.',
    messageId: '<20261125.reply.31882@mail.example.com>',
  },
};

let historyDir: string;
let session: WorkflowSession;
let results: RunResult[];
const byFile = (name: string) => results.find((r) => r.file === join(SAMPLES, name))!;
const mailsOf = (execution: string) => readOutbox(session.outboxFile).filter((m) => m.execution === execution);

beforeAll(async () => {
  historyDir = mkdtempSync(join(tmpdir(), 'stepwise-order-support-'));
  session = await WorkflowSession.start({ workflow: 'order-support', historyDir, logLevel: 'SILENT' });
  results = await session.runFiles(
    ['damaged-mug.eml', 'unreadable-attachment.eml', 'missing-order-number.eml'].map((f) => join(SAMPLES, f)),
  );
});
afterAll(async () => {
  await session?.close();
  rmSync(historyDir, { recursive: true, force: true });
});

describe('the order-support samples', () => {
  it('classifies both attachments, looks up order and customer at once, and confirms the ticket the child opened', () => {
    const result = byFile('damaged-mug.eml');
    expect(result.status).toBe('SUCCEEDED');
    const step = (name: string) => result.steps.find((s) => s.name === name)!;
    expect(step('03-classify-attachments').fields.classifications).toEqual([
      {
        index: 0,
        ok: true,
        step: '04-classify-attachment',
        fields: { name: 'invoice-ORD-104233.pdf', label: 'invoice' },
      },
      { index: 1, ok: true, step: '04-classify-attachment', fields: { name: 'broken-mug.jpg', label: 'damage-photo' } },
    ]);
    expect(step('05-look-up').fields).toMatchObject({
      order: { found: true, status: 'delivered' },
      customer: { found: true, customerId: 'CUS-20417' },
    });
    const [mail] = mailsOf(result.executionName!);
    expect(mail!.body).toMatch(/opened ticket TKT-[0-9A-F]{12} for your order ORD-104233/);
  });

  it('reports the empty attachment as a failed item and goes on', () => {
    const result = byFile('unreadable-attachment.eml');
    expect(result.status).toBe('SUCCEEDED');
    const classifications = result.steps.find((s) => s.name === '03-classify-attachments')!.fields.classifications;
    expect(classifications).toEqual([
      expect.objectContaining({ index: 0, ok: true }),
      expect.objectContaining({ index: 1, ok: false, error: expect.objectContaining({ Error: 'StepFailedError' }) }),
    ]);
    expect(result.steps.at(-1)!.name).toBe('15-confirm');
  });

  it('asks for the missing order number, waits, and goes on once with the reply in the thread', async () => {
    const asked = byFile('missing-order-number.eml');
    expect(asked.status).toBe('PAUSED');
    expect(mailsOf(asked.executionName!).map((m) => m.body)).toEqual([
      expect.stringContaining('we need your order number'),
    ]);
    const first = await session.eventWaits.send(reply);
    expect(first.outcomes).toEqual([expect.objectContaining({ outcome: 'resumed', step: '10-await-reply' })]);
    const [resumed] = first.executions;
    expect(resumed!.status).toBe('SUCCEEDED');
    expect(stepTrail(resumed!.history).map((s) => s.name)).toContain('14-open-ticket');
    expect(mailsOf(asked.executionName!).at(-1)!.body).toMatch(
      /opened ticket TKT-[0-9A-F]{12} for your order ORD-104871/,
    );
    // The same reply again resumes nothing: it is recorded with its reason.
    const again = await session.eventWaits.send(reply);
    expect(again.executions).toEqual([]);
    expect(again.outcomes).toEqual([expect.objectContaining({ outcome: 'unmatched' })]);
  });
});
