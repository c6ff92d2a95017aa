/** The guard's definition format and its checks, on their own. */
import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadGuardRules } from '../../lambdas/lib/workflow/guard-schema.ts';
import type { StepDefinition, WorkflowDefinition } from '../../lambdas/lib/workflow/schema.ts';
import { responseFacts } from '../../lambdas/lib/response-facts.ts';
import { checkText } from '../../lambdas/steps/guard.ts';

function workflowWith(rules: string, guard: StepDefinition['guard'] = { rules: 'guards/r.yaml', onViolation: 'regenerate', maxRegenerations: 1 }) {
  const dir = mkdtempSync(join(tmpdir(), 'guard-'));
  mkdirSync(join(dir, 'guards'));
  writeFileSync(join(dir, 'guards', 'r.yaml'), rules);
  const step = { name: 's1', kind: 'llm', tools: ['send_email'], file: 'steps/s1.md', instruction: '# Role\nYou write replies.', guard } as unknown as StepDefinition;
  return { def: { dir } as WorkflowDefinition, step };
}

describe('guard rules files', () => {
  it('refuses a bad regular expression, a bad CEL expression, a duplicate id, with the file and field', () => {
    const fallback = 'fallback: Hello.\ndescription: x\n';
    const load = (checks: string) => {
      const { def, step } = workflowWith(`${fallback}checks:\n${checks}`);
      return () => loadGuardRules(def, step);
    };
    expect(load("  - { id: a, type: deny, patterns: ['(unclosed'] }")).toThrow(/r\.yaml: checks\.0: bad regular expression/);
    expect(load("  - { id: a, type: expression, expression: 'size(links) ==' }")).toThrow(/r\.yaml: checks\.0\.expression: /);
    expect(load('  - { id: a, type: links }\n  - { id: a, type: phones }')).toThrow(/r\.yaml: checks\.1\.id: duplicate check id "a"/);
    expect(load("  - { id: a, type: granted, pattern: 'X-\\d+', from: [ticketId] }")).toThrow(/checks\.0\.from\.0: data\.<field> or input\.<field>/);
  });

  it('refuses a guard on a code step, a guarded tool off the allow-list, a missing file', () => {
    const { def, step } = workflowWith('description: x\nfallback: Hi.\nchecks: [{ id: a, type: links }]\n');
    expect(() => loadGuardRules(def, { ...step, kind: 'code' })).toThrow(/steps\/s1\.md: guard: only LLM steps are guarded/);
    expect(() => loadGuardRules(def, { ...step, guard: { ...step.guard!, tools: ['create_ticket'] } })).toThrow(/guard\.tools\.0: "create_ticket" is not one of the step's tools/);
    expect(() => loadGuardRules(def, { ...step, guard: { ...step.guard!, rules: 'guards/none.yaml' } })).toThrow(/guard\.rules: no file/);
  });
});

describe('response facts', () => {
  it('finds link hosts (with or without a scheme), email addresses, phone numbers and amounts; not dates, serials or ticket ids', () => {
    const facts = responseFacts(
      'Visit https://www.Evil.example/path?x=1 or fast-repairs.com, mail help@evil.example, call +1 (800) 555-0100 or 020 7946 0958. ' +
        'Refund $75.50 or 20 EUR. Warranty ended 2024-03-12; serial SN1234567; ticket TKT-7K2M9QXA4HPD.',
    );
    expect(facts).toEqual({
      links: ['evil.example', 'fast-repairs.com'],
      emails: ['help@evil.example'],
      phones: ['+18005550100', '02079460958'],
      amounts: [75.5, 20],
      max_amount: 75.5,
    });
  });

  it('an expression check reads the facts, the arguments and the state', () => {
    const rules = { checks: [{ id: 'small', type: 'expression' as const, expression: 'max_amount <= data.limit && args.body.size() < 200' }] };
    const ctx = { step: { instruction: '', tools: [] }, internalNames: [], scope: { data: { limit: 50 }, input: {} }, args: { body: 'x' } };
    expect(checkText('We refund $40.', rules, { ...ctx, args: { body: 'We refund $40.' } })).toEqual([{ check: 'small', lane: 'deterministic', passed: true }]);
    expect(checkText('We refund $60.', rules, { ...ctx, args: { body: 'We refund $60.' } })[0]).toMatchObject({ passed: false, found: ['max_amount <= data.limit && args.body.size() < 200'] });
  });
});
