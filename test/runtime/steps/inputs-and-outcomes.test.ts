import { describe, expect, it } from 'vitest';
import { EvalCaseSchema } from '../../../src/definitions/eval-cases.ts';
import { checkInput, untrustedFields } from '../../../src/definitions/workflow/input.ts';
import { loadWorkflow } from '../../../src/definitions/workflow/loader.ts';
import type { WorkflowDefinition } from '../../../src/definitions/workflow/schema.ts';
import { outcomeFailures } from '../../../src/evals/runner.ts';
import type { RunResult } from '../../../src/local/sessions/workflow-session.ts';

const withInput = (
  input: WorkflowDefinition['manifest']['input'],
  triggers: WorkflowDefinition['manifest']['triggers'] = [{ type: 'api' }],
): WorkflowDefinition => {
  const def = loadWorkflow('case-desk');
  return { ...def, manifest: { ...def.manifest, input, triggers } };
};

describe('workflow inputs', () => {
  const orders = withInput({
    schema: {
      type: 'object',
      properties: { orderId: { type: 'string', pattern: '^O-\\d+$' }, note: { type: 'string' } },
      required: ['orderId'],
    },
    untrusted: ['note'],
  });

  it('are checked against the manifest JSON Schema, naming the bad field', () => {
    expect(checkInput(orders, { orderId: 'O-1', note: 'hi' })).toEqual({ input: { orderId: 'O-1', note: 'hi' } });
    expect(checkInput(orders, { orderId: 'nope' }).problem).toMatch(/^orderId: /);
    expect(checkInput(orders, { note: 'no id' }).problem).toBe('missing field `orderId`');
    expect(checkInput(orders, 'not an object').problem).toBeDefined();
  });

  it('of an email workflow are the verified ingress record, and the email is untrusted', () => {
    const desk = loadWorkflow('case-desk');
    expect(untrustedFields(desk)).toEqual(['email']);
    expect(checkInput(desk, { email: { id: 'x' } }).problem).toMatch(/^email: missing field `\w+`$/);
    expect(untrustedFields(orders)).toEqual(['note']);
  });

  it('obey additionalProperties: false', () => {
    const strict = withInput({
      schema: { type: 'object', properties: { a: { type: 'string' } }, additionalProperties: false },
      untrusted: [],
    });
    expect(checkInput(strict, { a: 'x' }).input).toEqual({ a: 'x' });
    expect(checkInput(strict, { a: 'x', extra: 1 }).problem).toBeDefined();
  });

  it('without a schema are any JSON object', () => {
    expect(checkInput(withInput(undefined), { anything: [1, 2] }).input).toEqual({ anything: [1, 2] });
  });
});

describe('eval outcomes', () => {
  const evalCase = (expected: Record<string, unknown>) =>
    EvalCaseSchema.parse({
      scenario_id: 'c1',
      description: 'd',
      category: 'c',
      input: { payload: {} },
      expected_output: expected,
    });
  const ran = (status: RunResult['status'], reason?: string): RunResult => ({
    file: 'c1.json',
    executionName: 'e',
    status,
    ...(reason && { reason }),
    steps: [],
    toolCalls: [],
    outbox: [],
  });

  it('expect SUCCEEDED by default', () => {
    expect(outcomeFailures(evalCase({}), ran('SUCCEEDED'))).toEqual([]);
    expect(outcomeFailures(evalCase({}), ran('FAILED', 'MaxStepsExceeded'))[0]!.why).toBe(
      'the execution failed: MaxStepsExceeded',
    );
  });

  it('can expect a named failure such as the step limit', () => {
    const limit = evalCase({ status: 'FAILED', error: 'MaxStepsExceeded' });
    expect(outcomeFailures(limit, ran('FAILED', 'MaxStepsExceeded'))).toEqual([]);
    expect(outcomeFailures(limit, ran('FAILED', 'FallbackFailed: boom'))[0]!.why).toBe(
      'the execution failed with another error',
    );
    expect(outcomeFailures(limit, ran('SUCCEEDED'))[0]!.why).toBe('the execution succeeded');
  });

  it('fail a case that never started', () => {
    expect(outcomeFailures(evalCase({}), ran('REJECTED', 'input does not match'))[0]!.why).toBe(
      'the case did not start: input does not match',
    );
  });

  it('give exactly one of email and payload', () => {
    expect(
      EvalCaseSchema.safeParse({ scenario_id: 'c', description: 'd', category: 'c', input: {}, expected_output: {} })
        .success,
    ).toBe(false);
  });
});
