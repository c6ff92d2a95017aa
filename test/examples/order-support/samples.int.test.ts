/**
 * The order-support samples end to end on the local runtime: the .eml files (with their MIME
 * attachments) through the real ingress, the synthesized ASL with its Map, Parallel, event and
 * workflow steps, the order-ticket child in the same session, and the customer's reply delivered
 * as the email trigger delivers it: a `stepwise.email` "Email Reply" event keyed by the thread. A
 * parcel in transit is waited for until its expected delivery (the session clock moves, nothing
 * sleeps) and looked up again: still not delivered (a ticket), or delivered meanwhile (a confirmation).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadWorkflow } from '../../../src/definitions/workflow/loader.ts';
import { readLocalExecution, stepTrail } from '../../../src/local/records/history.ts';
import { type RunResult, WorkflowSession } from '../../../src/local/sessions/workflow-session.ts';
import type { Toolbox } from '../../../src/runtime/tools/types.ts';
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

describe('a parcel in transit (parcel-in-transit.eml)', () => {
  const PARCEL = join(SAMPLES, 'parcel-in-transit.eml');
  const EXPECTED_DELIVERY = '2026-12-02T18:00:00Z';
  /** The order system once the wait is over: the carrier has delivered the parcel meanwhile. */
  const deliveredMeanwhile = (toolbox: Toolbox): Toolbox => ({
    spec: (name) => toolbox.spec(name),
    async execute(name, args, ctx) {
      const call = await toolbox.execute(name, args, ctx);
      return name === 'look_up_order' && ctx.step === '17-look-up-order-again' && call.result
        ? { ...call, result: { ...(call.result as object), status: 'delivered', deliveredAt: '2026-12-02' } }
        : call;
    },
  });
  const sessions: { dir: string; session: WorkflowSession }[] = [];
  const runParcel = async (services?: { wrapToolbox: (toolbox: Toolbox) => Toolbox }) => {
    const dir = mkdtempSync(join(tmpdir(), 'stepwise-order-support-parcel-'));
    const parcel = await WorkflowSession.start({
      workflow: 'order-support',
      historyDir: dir,
      logLevel: 'SILENT',
      ...(services && { services }),
    });
    sessions.push({ dir, session: parcel });
    const [result] = await parcel.runFiles([PARCEL]);
    const trail = stepTrail(readLocalExecution(result!.executionName!, dir).events).map((s) => s.name);
    const waited = readLocalExecution(result!.executionName!, dir).events.filter((e) => e.type === 'WaitStateEntered');
    const mails = readOutbox(parcel.outboxFile).filter((m) => m.execution === result!.executionName);
    return { result: result!, trail, waited, mails, clock: parcel.runtime.clock };
  };
  afterAll(async () => {
    for (const { dir, session: s } of sessions) {
      await s.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('waits until the expected delivery, finds it still not delivered, and opens a ticket', async () => {
    const { result, waited, mails, clock } = await runParcel();
    expect(result.status).toBe('SUCCEEDED');
    expect(result.steps.map((s) => s.name)).toEqual([
      '01-read-request',
      '02-check-attachments',
      '06-look-up-order',
      '07-look-up-customer',
      '05-look-up',
      '08-decide',
      '17-look-up-order-again',
      '14-open-ticket',
      '15-confirm',
    ]);
    const step = (name: string) => result.steps.find((s) => s.name === name)!;
    expect(step('08-decide').next).toBe('16-wait-for-delivery');
    expect(step('05-look-up').fields.order).toMatchObject({ status: 'shipped', expectedDelivery: EXPECTED_DELIVERY });
    expect(waited.map((e) => e.stateEnteredEventDetails?.name)).toEqual(['16-wait-for-delivery.wait']);
    // Nothing slept: the session clock moved to the expected delivery (or stayed, once it is past).
    expect(clock.now().getTime()).toBeGreaterThanOrEqual(Date.parse(EXPECTED_DELIVERY));
    expect(mails.map((m) => m.body)).toEqual([
      expect.stringMatching(/opened ticket TKT-[0-9A-F]{12} for your order ORD-105320/),
    ]);
  });

  it('confirms the delivery when the order was delivered during the wait', async () => {
    const { result, trail, mails } = await runParcel({ wrapToolbox: deliveredMeanwhile });
    expect(result.status).toBe('SUCCEEDED');
    expect(trail.slice(-3)).toEqual(['08-decide', '17-look-up-order-again', '18-confirm-delivery']);
    expect(result.steps.find((s) => s.name === '17-look-up-order-again')!.fields.order).toMatchObject({
      status: 'delivered',
      deliveredAt: '2026-12-02',
    });
    expect(mails.map((m) => m.body)).toEqual([expect.stringContaining('your order ORD-105320 has now been delivered')]);
  });
});
