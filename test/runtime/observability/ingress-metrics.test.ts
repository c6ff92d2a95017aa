/** The ingress handler's metrics: one EMF line per mail; only a rejection has a dimension, its reason code. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { S3Client } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { memoryEventLog } from '../../../src/runtime/event-log.ts';
import { createHandler } from '../../../src/runtime/triggers/email/handler.ts';
import type { ExecutionStarter } from '../../../src/runtime/triggers/email/starter.ts';
import { memoryEmailStore } from '../../../src/runtime/triggers/email/store.ts';
import { FIXTURE_STATEMACHINES } from '../../support/fixture-project.ts';
import { dimensionsOf, namespaceOf, unitsOf, useEmfCapture, valuesOf } from './emf.ts';

const RAW = readFileSync(join(FIXTURE_STATEMACHINES, 'case-desk', 'samples', 'valid.eml'));
const ENV = {
  EMAIL_BUCKET: 'inbound-mail',
  EMAILS_TABLE: 'Emails',
  EVENTS_TABLE: 'Events',
  STATE_MACHINE_ARN: 'arn:aws:states:us-east-1:123456789012:stateMachine:CaseDesk',
  MAIL_FROM: 'cases@dev.desk.example.com',
  POWERTOOLS_SERVICE_NAME: 'stepwise-ingress',
  POWERTOOLS_METRICS_DISABLED: 'false',
};

/** An SES Lambda-action record; `spam: 'FAIL'` makes the ingress refuse the mail. */
function record(messageId: string, spam = 'PASS') {
  const pass = { status: 'PASS' };
  return {
    eventSource: 'aws:ses',
    ses: {
      mail: { messageId },
      receipt: {
        recipients: ['cases@dev.desk.example.com'],
        spamVerdict: { status: spam },
        virusVerdict: pass,
        spfVerdict: pass,
        dkimVerdict: pass,
        dmarcVerdict: pass,
      },
    },
  };
}

function handler(env: Record<string, string> = ENV) {
  // Every key holds the same sample mail: the outcome comes from the verdicts and the delivery count.
  const s3 = {
    send: async () => ({ Body: { transformToByteArray: async () => new Uint8Array(RAW) } }),
  } as unknown as S3Client;
  const started = new Set<string>();
  const starter: ExecutionStarter = {
    definitive: true,
    start: async (name) => (started.has(name) ? 'DUPLICATE' : (started.add(name), 'STARTED')),
  };
  return createHandler(env, {
    s3,
    starter,
    emails: memoryEmailStore(),
    events: memoryEventLog(),
    clock: () => new Date('2026-11-21T09:14:05Z'),
  });
}

const emf = useEmfCapture();

describe('ingress metrics', () => {
  it('counts each mail once: accepted, duplicate delivery, rejected with its reason as the only extra dimension', async () => {
    const results = await handler()({ Records: [record('ses-0001'), record('ses-0001'), record('ses-0002', 'FAIL')] });
    expect(results.map((r) => r.status)).toEqual(['STARTED', 'DUPLICATE', 'REJECTED']);

    const lines = emf.lines();
    expect(lines.map(valuesOf)).toEqual([{ EmailAccepted: 1 }, { EmailDuplicate: 1 }, { EmailRejected: 1 }]);
    expect(lines.map(dimensionsOf)).toEqual([
      { service: 'stepwise-ingress' },
      { service: 'stepwise-ingress' },
      { service: 'stepwise-ingress', reason: 'spam' },
    ]);
    expect(lines.map(namespaceOf)).toEqual(['Stepwise', 'Stepwise', 'Stepwise']);
    expect(lines.map(unitsOf)).toEqual([
      { EmailAccepted: 'Count' },
      { EmailDuplicate: 'Count' },
      { EmailRejected: 'Count' },
    ]);
  });

  it('puts no address, message id or execution name in the metrics', async () => {
    const results = await handler()({ Records: [record('ses-0001'), record('ses-0002', 'FAIL')] });
    const text = JSON.stringify(emf.lines());
    for (const value of [
      'nora.kent@example.org',
      'Nora Kent',
      'cases@dev.desk.example.com',
      'ses-000',
      ...results.map((r) => r.executionName),
    ])
      expect(text).not.toContain(value);
  });

  it('emits nothing off Lambda unless the environment asks for metrics', async () => {
    const { POWERTOOLS_METRICS_DISABLED: _, ...local } = ENV;
    await handler(local)({ Records: [record('ses-0001')] });
    await handler({ ...ENV, POWERTOOLS_METRICS_DISABLED: 'true', AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs22.x' })({
      Records: [record('ses-0001')],
    });
    expect(emf.lines()).toEqual([]);
    expect(emf.other()).toEqual([]);
  });
});
