/**
 * Fault injection through the local runtime on the warranty agent (real ingress, synthesized ASL,
 * handlers, DynamoDB Local): transient faults are retried with backoff and then handed to the
 * fallback; crashes after a side effect are retried without a second ticket or mail; concurrent
 * redeliveries of one mail have one effect.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DynamoDBDocumentClient, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { afterEach, describe, expect, it } from 'vitest';
import { STATEMACHINES_DIR } from '../../src/core/paths.ts';
import { WorkflowSession, type WorkflowSessionOptions } from '../../src/local/sessions/workflow-session.ts';
import { readOutbox } from '../../src/runtime/triggers/email/mail.ts';
import { recordFigure } from './figures.ts';

const VALID = readFileSync(join(STATEMACHINES_DIR, 'warranty-email/samples/valid-warranty.eml'), 'utf8');
/** The same mail under another Message-ID: a new claim, not a redelivery. */
const claim = (id: string) => VALID.replace(/^Message-ID: .*$/m, `Message-ID: <${id}@example.org>`);

let session: WorkflowSession | undefined;
afterEach(() => session?.close());

const start = async (options: Partial<WorkflowSessionOptions>) =>
  (session = await WorkflowSession.start({
    workflow: 'warranty-email',
    historyDir: false,
    logLevel: 'SILENT',
    retryDelayMs: 0,
    ...options,
  }));

async function tickets(s: WorkflowSession): Promise<Record<string, unknown>[]> {
  const out = await DynamoDBDocumentClient.from(s.dynamo.client).send(
    new ScanCommand({ TableName: s.tables.TICKETS_TABLE }),
  );
  return out.Items ?? [];
}

describe('fault injection', () => {
  it('retries a throttled model with backoff, then hands the email to the fallback (one hand-off reply)', async () => {
    const s = await start({
      faults: { '01-extract-serial': { error: { name: 'ModelThrottledError', message: 'Rate exceeded' } } },
    });
    const result = await s.deliverEmail(claim('throttled'), 'throttled.eml');
    expect(result.status).toBe('SUCCEEDED');
    expect(result.steps[0]).toMatchObject({
      name: '01-extract-serial',
      retries: 3,
      error: expect.stringMatching(/^ModelThrottledError/),
    });
    expect(result.steps.at(-1)!.name).toBe('04-out-of-scope');
    expect(result.outbox).toHaveLength(1);
    expect(result.outbox[0]!.body).toContain('a member of our support team will review it');
    recordFigure('throttling', `retried ${result.steps[0]!.retries}x then fallback, ${result.outbox.length} reply`);
  });

  it('retries a step that crashed after opening the ticket: still one ticket and one confirmation', async () => {
    const s = await start({
      faults: {
        '03a-valid-warranty': {
          crashAfterSideEffect: true,
          error: { name: 'ToolUnavailableError', message: 'crashed' },
          times: 1,
        },
      },
    });
    const result = await s.deliverEmail(claim('crash-ticket'), 'crash-ticket.eml');
    expect(result.status).toBe('SUCCEEDED');
    expect(result.steps.map((x) => x.name)).toEqual([
      '01-extract-serial',
      '02-check-warranty',
      '03a-valid-warranty',
      '05-send-confirmation',
    ]);
    expect(result.steps[2]).toMatchObject({ retries: 1 });
    const opened = await tickets(s);
    expect(opened).toHaveLength(1);
    expect(result.outbox).toHaveLength(1);
    expect(result.outbox[0]!.body).toContain(String(opened[0]!.id));
    recordFigure('crash after create_ticket', `${opened.length} ticket, ${result.outbox.length} mail`);
  });

  it('retries a step that crashed after sending the reply: still one mail', async () => {
    const s = await start({
      faults: {
        '05-send-confirmation': { crashAfterSideEffect: true, error: { name: 'Lambda.ServiceException' }, times: 2 },
      },
    });
    const result = await s.deliverEmail(claim('crash-mail'), 'crash-mail.eml');
    expect(result.status).toBe('SUCCEEDED');
    expect(result.steps.at(-1)).toMatchObject({ name: '05-send-confirmation', retries: 2 });
    expect(readOutbox(s.outboxFile).filter((m) => m.execution === result.executionName)).toHaveLength(1);
    recordFigure('crash after send_email', `${result.outbox.length} mail after 2 crashes`);
  });

  it('does not retry a step that timed out (as Lambda), and the fallback answers', async () => {
    const s = await start({ faults: { '02-check-warranty': { timeout: true } } });
    const result = await s.deliverEmail(claim('timeout'), 'timeout.eml');
    expect(result.status).toBe('SUCCEEDED');
    const timedOut = result.steps.find((x) => x.name === '02-check-warranty')!;
    expect(timedOut.error).toMatch(/^Sandbox\.Timedout/);
    expect(timedOut.retries).toBeUndefined();
    expect(result.steps.at(-1)!.name).toBe('04-out-of-scope');
    expect(result.outbox).toHaveLength(1);
  }, 120_000);

  it('has one effect for 2 to 5 concurrent redeliveries of the same mail', async () => {
    const s = await start({});
    const outcomes: string[] = [];
    for (const copies of [2, 3, 4, 5]) {
      const raw = claim(`redelivered-${copies}`);
      const results = await Promise.all(Array.from({ length: copies }, (_, i) => s.deliverEmail(raw, `copy-${i}.eml`)));
      expect(results.filter((r) => r.status === 'SUCCEEDED')).toHaveLength(1);
      expect(results.filter((r) => r.status === 'DUPLICATE')).toHaveLength(copies - 1);
      const execution = results.find((r) => r.status === 'SUCCEEDED')!.executionName;
      expect(readOutbox(s.outboxFile).filter((m) => m.execution === execution)).toHaveLength(1);
      outcomes.push(`${copies}→1`);
    }
    expect(await tickets(s)).toHaveLength(4);
    recordFigure('concurrent redeliveries', outcomes.join(', '));
  });
});
