/** The warranty replies do not quote the sender: their guard rules declare the quoting check (the engine's tests run it). */
import { describe, expect, it } from 'vitest';
import { loadGuardRules } from '../../../src/definitions/workflow/guard.ts';
import { getStep } from '../../../src/definitions/workflow/loader.ts';
import { warrantyPlugin } from './support.ts';

describe('the warranty replies do not quote the sender', () => {
  it('is declared in the reply rules: 8 words or 40 characters, from the email and the issue summary step 01 wrote', () => {
    const def = warrantyPlugin.def;
    const rules = loadGuardRules(def, getStep(def, '05-send-confirmation'))!;
    expect(rules.checks.find((c) => c.type === 'quotes')).toEqual({
      id: 'no-quoting-the-sender',
      type: 'quotes',
      minWords: 8,
      minChars: 40,
      from: ['data.issueSummary'],
      trusted: ['data.warranty', 'data.ticketId'],
      message: expect.any(String),
    });
  });
});
