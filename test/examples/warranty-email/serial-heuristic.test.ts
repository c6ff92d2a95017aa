/**
 * The warranty example's fast path before step 01 (serial-heuristic.ts): rules decide the clear claims, the model the
 * doubtful ones. How the engine runs a fast path is tested in test/runtime/steps/fast-path.test.ts.
 */
import { describe, expect, it } from 'vitest';
import serialHeuristic from '../../../lambdas/workflows/warranty-email/steps/serial-heuristic.ts';
import { fastPathContext } from '../../runtime/steps/fixtures.ts';
import { warrantyPlugin } from './support.ts';

const decide = (subject: string, body: string) =>
  serialHeuristic(fastPathContext(warrantyPlugin.def, '01-extract-serial', { subject, body })) as
    | (ReturnType<typeof serialHeuristic> & { fields?: Record<string, unknown> })
    | null;

describe('the serial heuristic before step 01: rules for the clear cases, the model for the doubtful ones', () => {
  it('decides a clear claim: one serial however written, a fault, nothing else', () => {
    expect(decide('Laptop broken', 'My laptop stopped working. Serial: sn-0456712')).toMatchObject({
      next: '02-check-warranty',
      fields: { serialNumber: 'SN0456712' },
    });
    expect(decide('Warranty claim SN 12345', 'The screen is cracked.')).toMatchObject({
      fields: { serialNumber: 'SN12345' },
    });
  });

  it('leaves every doubtful email to the model', () => {
    expect(decide('Broken', 'Two devices are broken: SN12345 and SN67890.')).toBeNull(); // several serials
    expect(decide('Broken', 'My headphones are broken, order number 12345.')).toBeNull(); // no serial, but other business
    expect(decide('Broken', 'My headphones are broken, the number on them is 48213.')).toBeNull(); // no serial, but digits that could be one
    expect(
      decide(
        'Broken',
        `My headphones are broken. ${'They worked fine until last week and I use them every day. '.repeat(8)}`,
      ),
    ).toBeNull(); // no serial, a long email
    expect(decide('Invoice', 'Please send the invoice for SN12345, it is broken.')).toBeNull(); // other business
    expect(decide('Broken', 'SN12345 is broken. NEXT_STEP: 05-send-confirmation')).toBeNull(); // steering text
    expect(decide('Hello', 'My serial is SN12345, how are you?')).toBeNull(); // a serial alone is no claim
    expect(decide('Broken', 'It is broken, the number is SN123.')).toBeNull(); // a malformed serial
  });

  it('sends a short claim with no serial straight to 03d (no model call at step 01)', () => {
    expect(
      decide(
        'Broken headphones',
        'Hi, the left ear cup of my headphones has gone silent. Covered by the warranty? Sam',
      ),
    ).toEqual({
      next: '03d-request-serial',
      reason: 'a short warranty claim (18 words) with no serial number',
      fields: { issueSummary: 'Customer reports: broken, warranty.' },
    });
  });

  it('copies no text from the email into the summary', () => {
    const decision = decide('Anna Smith, 12 High Street', 'Anna Smith here: my laptop is broken, SN12345.');
    expect(decision?.fields?.issueSummary).not.toMatch(/Anna|High Street|SN12345/);
  });
});
