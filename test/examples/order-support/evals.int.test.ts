/**
 * The order-support eval cases through the eval runner: every route (no question, a reply, a
 * reminder then a reply, no reply, a failed item, a failed branch, not an order, a parcel in transit
 * waited for) passes with the offline model, the event steps resumed through the cases' checkpoints; wrong `items` and
 * `branches` expectations fail, naming the step and what ran.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { type EvalCase, loadEvalCases } from '../../../src/definitions/eval-cases.ts';
import { loadWorkflow } from '../../../src/definitions/workflow/loader.ts';
import { type EvalReport, runEvalCases } from '../../../src/evals/runner.ts';

const cases = loadEvalCases(loadWorkflow('order-support').dir);
const byId = (id: string) => cases.find((c) => c.scenario_id === id)!;

/** A case of the workflow with other `items` and `branches` expectations. */
const expecting = (id: string, scenario: string, expected: Partial<EvalCase['expected_output']>): EvalCase => ({
  ...byId(id),
  scenario_id: scenario,
  expected_output: { ...byId(id).expected_output, ...expected },
});
const wrongItems = expecting('failing_item_001', 'wrong_items_001', {
  items: { '03-classify-attachments': { succeeded: 2, failed: 0 }, '04-classify-attachment': { failed: 0 } },
});
const wrongBranches = expecting('failing_branch_001', 'wrong_branches_001', {
  branches: { '05-look-up': { order: 'SUCCEEDED', invoice: 'SUCCEEDED' } },
});

let report: EvalReport;
beforeAll(async () => {
  report = await runEvalCases('order-support', [...cases, wrongItems, wrongBranches], {
    session: { logLevel: 'SILENT' },
  });
});
const result = (id: string) => report.cases.find((c) => c.id === id)!;

describe('order-support evals', () => {
  it('has a case for every route, and passes each with the offline model', () => {
    expect(cases.map((c) => c.scenario_id)).toEqual([
      'failing_branch_001',
      'failing_item_001',
      'happy_path_001',
      'no_reply_001',
      'not_an_order_001',
      'parcel_in_transit_001',
      'reminder_then_reply_001',
      'reply_arrives_001',
    ]);
    const own = report.cases.slice(0, cases.length);
    expect(own.filter((c) => !c.passed).map((c) => ({ id: c.id, failures: c.failures }))).toEqual([]);
  });

  it('resumes the event steps through checkpoints: a reply, a timeout then a reply, two timeouts', () => {
    const steps = (id: string) => result(id).steps.map((s) => s.name);
    expect(steps('reply_arrives_001')).toContain('13-read-reply');
    expect(steps('reply_arrives_001')).not.toContain('11-remind');
    expect(steps('reminder_then_reply_001').slice(-5)).toEqual([
      '09-ask-customer',
      '11-remind',
      '13-read-reply',
      '14-open-ticket',
      '15-confirm',
    ]);
    expect(steps('no_reply_001').slice(-2)).toEqual(['11-remind', '99-hand-off']);
  });

  it('crosses the wait until the expected delivery, then looks the order up again', () => {
    const steps = result('parcel_in_transit_001').steps;
    // A wait step runs no function: 08-decide routes to it, and the look-up again follows it.
    expect(steps.find((s) => s.name === '08-decide')!.next).toBe('16-wait-for-delivery');
    expect(steps.map((s) => s.name).slice(-4)).toEqual([
      '08-decide',
      '17-look-up-order-again',
      '14-open-ticket',
      '15-confirm',
    ]);
  });

  it('fails wrong item counts, naming the map step, and a step that ran no items', () => {
    expect(result('wrong_items_001').passed).toBe(false);
    expect(result('wrong_items_001').failures).toEqual([
      {
        index: null,
        step: '03-classify-attachments',
        expected: '2 succeeded, 0 failed',
        actual: '1 succeeded, 1 failed',
        why: "03-classify-attachments's items: 1 succeeded, 1 failed, expected 2 succeeded, 0 failed",
      },
      {
        index: null,
        step: '04-classify-attachment',
        expected: '0 failed',
        actual: '(no items ran)',
        why: '04-classify-attachment ran no items: it did not run, or is not a map step',
      },
    ]);
  });

  it('fails a wrong branch outcome and an unknown branch, naming the parallel step', () => {
    expect(result('wrong_branches_001').failures.map((f) => f.why)).toEqual([
      "05-look-up's branch order FAILED, expected SUCCEEDED",
      '05-look-up has no branch invoice',
    ]);
  });
});
