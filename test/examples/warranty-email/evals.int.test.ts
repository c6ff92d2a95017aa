/**
 * The eval runner end to end: every case of statemachines/warranty-email/evals becomes an .eml,
 * goes through the ingress and the synthesized ASL with the offline model, and passes; a case with
 * a wrong expectation fails with a report that names the step and why.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { loadEvalCases, parseEvalCase } from '../../../src/definitions/eval-cases.ts';
import { loadWorkflow } from '../../../src/definitions/workflow/loader.ts';
import { type EvalReport, runEvalCases } from '../../../src/evals/runner.ts';
import { WRONG_CASE_YAML } from './support.ts';

const cases = loadEvalCases(loadWorkflow('warranty-email').dir);
const wrong = parseEvalCase('wrong.yaml', WRONG_CASE_YAML);
/** Non-ASCII sender name and subject: the case's email must reach the steps intact. */
const unicode = parseEvalCase(
  'unicode.yaml',
  `
scenario_id: unicode_sender_001
description: A sender name and subject outside ASCII survive the trip through MIME.
category: valid-warranty
input:
  email:
    from: zoe.mueller@example.de
    from_name: Zoë Müller
    subject: Kopfhörer defekt – Garantie
    body: "Meine Kopfhörer sind defekt, sie laden nicht mehr (not charging). Seriennummer SN4455667."
  mock_function_responses:
    check_warranty: { serialNumber: SN4455667, status: expired, product: Lumen X1, warrantyEnd: "2025-01-31" }
    send_email: { sent: true, to: zoe.mueller@example.de, messageId: "<r@outbox.local>" }
expected_output:
  expected_steps:
    - step_name: 01-extract-serial
      output_contains: ["SERIAL: SN4455667"]
    - step_name: 02-check-warranty
    - step_name: 03c-expired-warranty
      function_call: send_email
      output_contains: ["Hello Zoë Müller"]
`,
);

/** A case allowed 1 ms on the local runtime: no execution is that fast, so it fails on time alone. */
const base = cases.find((c) => c.scenario_id === 'out_of_scope_001')!;
const overTime = {
  ...base,
  scenario_id: 'over_time_001',
  expected_output: { ...base.expected_output, processing_time_ms: 1 },
};

let report: EvalReport;
const progress: string[] = [];
beforeAll(async () => {
  report = await runEvalCases('warranty-email', [...cases, unicode, overTime, wrong], {
    session: { logLevel: 'SILENT' },
    onCase: (c, i, n) => progress.push(`[${i + 1}/${n}] ${c.id} ${c.passed ? '✓' : '✗'}`),
  });
});

describe('stepwise eval (the runner)', () => {
  it('passes every case of the workflow with the offline model, each with its expected step sequence', () => {
    const own = report.cases.slice(0, cases.length);
    expect(own.filter((c) => !c.passed).map((c) => ({ id: c.id, failures: c.failures }))).toEqual([]);
    for (const [i, c] of cases.entries())
      expect(
        own[i]!.steps.map((s) => s.name),
        c.scenario_id,
      ).toEqual(c.expected_output.expected_steps!.map((s) => s.step_name));
  });

  it('delivers non-ASCII names and subjects intact', () => {
    expect(report.cases.find((c) => c.id === 'unicode_sender_001')).toMatchObject({ passed: true, failures: [] });
  });

  it('fails a case that takes longer than its processing_time_ms, the steps otherwise right', () => {
    const timed = report.cases.find((c) => c.id === 'over_time_001')!;
    expect(timed.passed).toBe(false);
    expect(timed.failures).toEqual([
      {
        index: null,
        step: null,
        expected: 'at most 1 ms',
        actual: `${timed.durationMs} ms`,
        why: `the case took ${timed.durationMs} ms on the local runtime, over its processing_time_ms of 1 ms`,
      },
    ]);
  });

  it('reports a wrong expectation at the step that diverged, with the route that was taken instead', () => {
    const failed = report.cases.at(-1)!;
    expect(failed.id).toBe('deliberately_wrong_001');
    expect(failed.passed).toBe(false);
    expect(failed.failures).toEqual([
      {
        index: 1,
        step: '02-check-warranty',
        expected: '02-check-warranty',
        actual: '03d-request-serial',
        why: expect.stringMatching(/^wrong step: 01-extract-serial routed to 03d-request-serial \(reason: .+\)$/),
      },
    ]);
    expect(failed.steps.map((s) => s.name)).toEqual(['01-extract-serial', '03d-request-serial']);
  });

  it('counts in integers and reports progress per case', () => {
    expect(report).toMatchObject({ passed: cases.length + 1, failed: 2, total: cases.length + 3 });
    expect(progress).toHaveLength(cases.length + 3);
    expect(progress.at(-1)).toBe(`[${cases.length + 3}/${cases.length + 3}] deliberately_wrong_001 ✗`);
  });
});
