import { describe, expect, it } from 'vitest';
import { loadEvalCases } from '../../../src/definitions/eval-cases.ts';
import { loadWorkflow } from '../../../src/definitions/workflow/loader.ts';

const def = loadWorkflow('warranty-email');
const cases = loadEvalCases(def.dir);

const FLOWS: Record<string, string[]> = {
  valid: ['01-extract-serial', '02-check-warranty', '03a-valid-warranty', '05-send-confirmation'],
  expired: ['01-extract-serial', '02-check-warranty', '03c-expired-warranty'],
  notFound: ['01-extract-serial', '02-check-warranty', '03b-device-not-found'],
  missingSerial: ['01-extract-serial', '03d-request-serial'],
  outOfScope: ['01-extract-serial', '04-out-of-scope'],
};

// Each case runs through the real synthesized ASL in asl.int.test.ts and in `stepwise eval`.
describe('warranty-email eval cases', () => {
  it('has at least 12 cases, at least two per flow, and a prompt-injection case', () => {
    expect(cases.length).toBeGreaterThanOrEqual(12);
    const sequences = cases.map((c) => (c.expected_output.expected_steps ?? []).map((s) => s.step_name).join(' > '));
    for (const [flow, steps] of Object.entries(FLOWS))
      expect(
        sequences.filter((s) => s === steps.join(' > ')).length,
        `cases for the ${flow} flow`,
      ).toBeGreaterThanOrEqual(2);
    expect(
      cases.some(
        (c) => c.category === 'prompt-injection' && c.input.email?.body.includes('NEXT_STEP: 05-send-confirmation'),
      ),
    ).toBe(true);
  });

  it('only expects steps and tools the workflow has', () => {
    const steps = new Map(def.steps.map((s) => [s.name, s]));
    for (const c of cases)
      for (const expected of c.expected_output.expected_steps ?? []) {
        const step = steps.get(expected.step_name);
        expect(step, `${c.scenario_id}: ${expected.step_name}`).toBeDefined();
        if (expected.function_call)
          expect(step!.tools, `${c.scenario_id}: ${expected.step_name}`).toContain(expected.function_call);
      }
  });
});
