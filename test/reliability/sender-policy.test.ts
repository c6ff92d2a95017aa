/**
 * The stricter sender policy (`email.requireAuthenticatedSender`, on in prod): only mail whose From
 * is authenticated (DMARC pass, or an SPF or DKIM pass aligned with the From domain) is answered;
 * anything else is stored and held for a person, with its reason in the event log and no reply.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { STATEMACHINES_DIR } from '../../src/core/paths.ts';
import { memoryEventLog } from '../../src/runtime/event-log.ts';
import {
  DEFAULT_POLICY,
  localSesMessageId,
  type SesReceipt,
  senderAuthenticated,
} from '../../src/runtime/triggers/email/checks.ts';
import { ingest } from '../../src/runtime/triggers/email/ingest.ts';
import type { WorkflowInput } from '../../src/runtime/triggers/email/starter.ts';
import { memoryEmailStore } from '../../src/runtime/triggers/email/store.ts';
import { synthApp } from '../examples/support/app.ts';
import { exampleEnv } from '../examples/support/config.ts';

const gray: SesReceipt = {
  spamVerdict: { status: 'PASS' },
  virusVerdict: { status: 'PASS' },
  spfVerdict: { status: 'PASS' },
  dkimVerdict: { status: 'GRAY' },
  dmarcVerdict: { status: 'GRAY' },
};
const results = (...values: string[]) => values.map((value) => ({ key: 'authentication-results', value }));
const authenticated = (headers: ReturnType<typeof results>, receipt: SesReceipt = gray) =>
  senderAuthenticated(headers, receipt, 'maria.lopez@example.org');

describe('senderAuthenticated', () => {
  it('accepts a DMARC pass, or an SPF or DKIM pass aligned with the From domain (relaxed: subdomains align)', () => {
    expect(authenticated([], { ...gray, dmarcVerdict: { status: 'PASS' } })).toBe(true);
    expect(authenticated(results('amazonses.com; spf=pass smtp.mailfrom=bounces.example.org'))).toBe(true);
    expect(authenticated(results('amazonses.com; spf=pass smtp.mailfrom=maria@example.org'))).toBe(true);
    expect(authenticated(results('amazonses.com; dkim=pass header.d=example.org'))).toBe(true);
    expect(
      authenticated(
        results('amazonses.com; spf=fail smtp.mailfrom=evil.example; dkim=pass header.i=@mail.example.org'),
      ),
    ).toBe(true);
  });

  it('refuses unaligned passes, failures, passes inside comments, a bare public suffix, and results lower in the mail (written by the sender)', () => {
    expect(authenticated([])).toBe(false);
    expect(
      authenticated(results('amazonses.com; spf=pass smtp.mailfrom=evil.example; dkim=pass header.d=evil.example')),
    ).toBe(false);
    expect(
      authenticated(results('amazonses.com; spf=softfail smtp.mailfrom=example.org; dkim=fail header.d=example.org')),
    ).toBe(false);
    expect(
      authenticated(results('amazonses.com; spf=none (dkim=pass header.d=example.org) smtp.mailfrom=evil.example')),
    ).toBe(false);
    expect(authenticated(results('amazonses.com; dkim=pass header.d=org'))).toBe(false);
    expect(authenticated(results('amazonses.com; spf=none', 'forged; dkim=pass header.d=example.org'))).toBe(false);
  });
});

const VALID = readFileSync(join(STATEMACHINES_DIR, 'warranty-email/samples/valid-warranty.eml'), 'utf8');
/** The valid claim without its authentication results: what a spoofer of a domain without DMARC would send. */
const UNAUTHENTICATED = VALID.replace(/^Authentication-Results:.*(\r?\n[ \t].*)*\r?\n/im, '').replace(
  /^Received-SPF:.*(\r?\n[ \t].*)*\r?\n/im,
  '',
);

async function deliver(raw: string, requireAuthenticatedSender: boolean) {
  const emails = memoryEmailStore();
  const events = memoryEventLog();
  const started: WorkflowInput[] = [];
  const result = await ingest(raw, undefined, await localSesMessageId(raw), {
    emails,
    events,
    starter: { definitive: false, start: async (_name, input) => (started.push(input), 'STARTED') },
    policy: { ...DEFAULT_POLICY, ownAddresses: ['claims@dev.warranty.example.com'], requireAuthenticatedSender },
    clock: () => new Date('2026-11-21T09:14:03.000Z'),
  });
  return {
    result,
    started,
    events: await events.list(result.executionName),
    stored: await emails.get(await localSesMessageId(raw)),
  };
}

describe('the ingress with the stricter sender policy', () => {
  it('holds an unauthenticated mail for a person: stored, recorded with its reason, nothing started', async () => {
    expect(UNAUTHENTICATED).not.toMatch(/Authentication-Results|Received-SPF/i);
    const held = await deliver(UNAUTHENTICATED, true);
    expect(held.result).toMatchObject({ status: 'REJECTED', reason: 'unauthenticated_sender' });
    expect(held.started).toEqual([]);
    expect(held.events).toEqual([
      expect.objectContaining({
        type: 'IngressRejected',
        reason: 'unauthenticated_sender',
        detail: expect.stringMatching(/^held for a person/),
      }),
    ]);
    expect(held.stored?.body).toContain('SN48213');
  });

  it('answers the same mail authenticated, and the unauthenticated one when the policy is off', async () => {
    expect((await deliver(VALID, true)).result.status).toBe('STARTED');
    expect((await deliver(UNAUTHENTICATED, false)).result.status).toBe('STARTED');
  });

  it('is a per-environment setting, on in prod, passed to the ingress function', () => {
    expect(exampleEnv('prod').email!.requireAuthenticatedSender).toBe(true);
    expect(exampleEnv('dev').email!.requireAuthenticatedSender).toBe(false);
    for (const [env, value] of [
      ['prod', 'true'],
      ['dev', 'false'],
    ] as const) {
      const { template } = synthApp(env);
      const ingress = Object.values(template.findResources('AWS::Lambda::Function')).filter(
        (f: any) => f.Properties.Environment?.Variables?.REQUIRE_AUTHENTICATED_SENDER !== undefined,
      );
      expect(ingress.map((f: any) => f.Properties.Environment.Variables.REQUIRE_AUTHENTICATED_SENDER)).toEqual([value]);
      // Held mail raises an alarm where the policy holds mail: someone has to read it.
      const held = Object.values(template.findResources('AWS::CloudWatch::Alarm')).filter(
        (a: any) => a.Properties.MetricName === 'EmailRejected',
      );
      expect(held.map((a: any) => a.Properties.Dimensions)).toEqual(
        value === 'true'
          ? [
              expect.arrayContaining([
                { Name: 'reason', Value: 'unauthenticated_sender' },
                { Name: 'service', Value: 'stepwise-ingress' },
              ]),
            ]
          : [],
      );
    }
  });
});
