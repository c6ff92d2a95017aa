import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, onTestFinished } from 'vitest';
import { DefinitionError } from '../../src/core/errors.ts';
import {
  EvalCaseSchema,
  type ExpectedStep,
  loadEvalCases,
  loadTransitionRules,
  parseEvalCase,
  TransitionRuleSchema,
} from '../../src/definitions/eval-cases.ts';
import { loadWorkflow } from '../../src/definitions/workflow/loader.ts';
import {
  type ActualStep,
  validateCase,
  validateFunctionCalls,
  validateProcessingTime,
  validateStepSequence,
  validateTransitionRules,
} from '../../src/evals/validator.ts';
import { mockToolbox } from '../../src/local/records/mock-toolbox.ts';
import { inboundEmail } from '../runtime/steps/fixtures.ts';
import { WARRANTY_TOOLS } from '../runtime/tools/fixtures.ts';

const s01: ActualStep = {
  step: '01-extract-serial',
  next: '02-check-warranty',
  reason: 'Serial found',
  fields: { serialNumber: 'SN12345', issueSummary: 'Does not charge' },
  toolCalls: [],
};
const s02: ActualStep = {
  step: '02-check-warranty',
  next: '03a-valid-warranty',
  reason: 'Warranty status: valid',
  fields: { warranty: { status: 'valid' } },
  toolCalls: [{ tool: 'check_warranty', args: { serialNumber: 'SN12345' }, result: { status: 'valid' } }],
};
const s03a: ActualStep = {
  step: '03a-valid-warranty',
  next: '05-send-confirmation',
  reason: 'Ticket created',
  fields: { ticketId: 'TKT-12345' },
  toolCalls: [
    { tool: 'route', args: { next: '04-out-of-scope' }, error: 'rejected: not a declared edge' },
    { tool: 'create_ticket', args: { serialNumber: 'SN12345', issueSummary: 'x' }, result: { ticketId: 'TKT-12345' } },
  ],
};
const s05: ActualStep = {
  step: '05-send-confirmation',
  next: 'DONE',
  reason: 'Confirmed',
  fields: {},
  toolCalls: [{ tool: 'send_email', args: { body: 'Ticket TKT-12345 is open.' }, result: { sent: true } }],
  reply: 'Ticket TKT-12345 is open.',
};

const step = (step_name: string, extra: Partial<ExpectedStep> = {}): ExpectedStep => ({
  step_name,
  output_contains: [],
  ...extra,
});
const VALID = [
  step('01-extract-serial', { output_contains: ['NEXT_STEP: 02-check-warranty', 'SERIAL: SN12345'] }),
  step('02-check-warranty', {
    function_call: 'check_warranty',
    function_args: { serialNumber: 'SN12345' },
    output_contains: ['NEXT_STEP: 03a-valid-warranty'],
  }),
  step('03a-valid-warranty', { function_call: 'create_ticket', output_contains: ['TICKET_ID: TKT-12345'] }),
  step('05-send-confirmation', { function_call: 'send_email', output_contains: ['TKT-12345'] }),
];

describe('validateStepSequence', () => {
  it('passes a matching execution (the shortened label SERIAL: means serialNumber)', () => {
    expect(validateStepSequence(VALID, [s01, s02, s03a, s05])).toEqual({ passed: true, failures: [] });
  });

  it('reports only the first diverging step, with the routing decision that caused it', () => {
    const wrong01: ActualStep = { ...s01, next: '03d-request-serial', reason: 'No serial number found', fields: {} };
    const s03d: ActualStep = { step: '03d-request-serial', next: 'DONE', reason: 'Asked', fields: {}, toolCalls: [] };
    const result = validateStepSequence(VALID, [wrong01, s03d]);
    expect(result.passed).toBe(false);
    // Step 01's missing output is the first divergence; the wrong step after it is a consequence.
    expect(result.failures.map((f) => [f.index, f.step, f.why])).toEqual([
      [0, '01-extract-serial', 'the step\'s output does not contain "NEXT_STEP: 02-check-warranty"'],
      [0, '01-extract-serial', 'the step\'s output does not contain "SERIAL: SN12345"'],
    ]);
    expect(result.failures[0]!.actual).toContain('NEXT_STEP: 03d-request-serial');

    const sequenceOnly = validateStepSequence([step('01-extract-serial'), step('02-check-warranty')], [wrong01, s03d]);
    expect(sequenceOnly.failures).toEqual([
      {
        index: 1,
        step: '02-check-warranty',
        expected: '02-check-warranty',
        actual: '03d-request-serial',
        why: 'wrong step: 01-extract-serial routed to 03d-request-serial (reason: No serial number found)',
      },
    ]);
  });

  it('reports a missing step and an unexpected extra step', () => {
    expect(validateStepSequence(VALID, [s01, s02]).failures).toEqual([
      {
        index: 2,
        step: '03a-valid-warranty',
        expected: '03a-valid-warranty',
        actual: '(none)',
        why: 'missing step: the execution ended after 02-check-warranty (next: 03a-valid-warranty, reason: Warranty status: valid)',
      },
    ]);
    expect(validateStepSequence(VALID.slice(0, 2), [s01, s02, s03a]).failures).toEqual([
      {
        index: 2,
        step: '03a-valid-warranty',
        expected: '(end)',
        actual: '03a-valid-warranty',
        why: 'unexpected extra step: 02-check-warranty routed to 03a-valid-warranty (reason: Warranty status: valid)',
      },
    ]);
    expect(validateStepSequence(VALID, []).failures[0]!.why).toBe('missing step: no step ran');
  });

  it('reports a tool the step did not call, and a call with other arguments', () => {
    const noCall = validateStepSequence(VALID.slice(0, 2), [s01, { ...s02, toolCalls: [] }]);
    expect(noCall.failures).toEqual([
      {
        index: 1,
        step: '02-check-warranty',
        expected: 'calls check_warranty',
        actual: 'calls: none',
        why: 'check_warranty was not called in this step',
      },
    ]);
    const otherArgs = validateStepSequence(VALID.slice(0, 2), [
      s01,
      { ...s02, toolCalls: [{ ...s02.toolCalls[0]!, args: { serialNumber: 'SN99999' } }] },
    ]);
    expect(otherArgs.failures[0]).toMatchObject({
      expected: 'check_warranty {"serialNumber":"SN12345"}',
      actual: 'check_warranty {"serialNumber":"SN99999"}',
      why: 'check_warranty was called with other arguments',
    });
  });

  it('does not count rejected route attempts as tool calls', () => {
    const onlyRoute = { ...s03a, toolCalls: [s03a.toolCalls[0]!] };
    expect(validateStepSequence(VALID.slice(0, 3), [s01, s02, onlyRoute]).failures[0]!.why).toBe(
      'create_ticket was not called in this step',
    );
  });
});

describe('validateFunctionCalls', () => {
  const all = [s01, s02, s03a, s05];
  const expected = (...names: string[]) => names.map((function_name) => ({ function_name }));

  it('passes the calls of the whole execution in order, ignoring route', () => {
    expect(
      validateFunctionCalls(
        [
          { function_name: 'check_warranty', arguments: { serialNumber: 'SN12345' } },
          ...expected('create_ticket', 'send_email'),
        ],
        all,
      ).passed,
    ).toBe(true);
  });

  it.each([
    [['check_warranty', 'create_ticket'], 'unexpected call send_email in 05-send-confirmation'],
    [['check_warranty', 'create_ticket', 'send_email', 'send_email'], 'missing call send_email'],
    [
      ['check_warranty', 'send_email', 'create_ticket'],
      'call 2 is create_ticket in 03a-valid-warranty, expected send_email',
    ],
  ])('reports %j: %s', (names, why) => {
    expect(validateFunctionCalls(expected(...names), all).failures).toEqual([
      {
        index: null,
        step: null,
        expected: names.join(', '),
        actual:
          'check_warranty (02-check-warranty), create_ticket (03a-valid-warranty), send_email (05-send-confirmation)',
        why,
      },
    ]);
  });

  it('reports other arguments', () => {
    const [failure] = validateFunctionCalls(
      [
        { function_name: 'check_warranty', arguments: { serialNumber: 'SN1' } },
        ...expected('create_ticket', 'send_email'),
      ],
      all,
    ).failures;
    expect(failure!.why).toBe(
      'check_warranty in 02-check-warranty was called with {"serialNumber":"SN12345"}, expected {"serialNumber":"SN1"}',
    );
  });
});

const CASE = `
scenario_id: demo_001
description: Demo.
category: valid-warranty
input:
  email: { from: a@example.com, subject: Broken, body: "SN12345 is broken" }
  mock_function_responses:
    check_warranty: { status: valid }
    send_email: { error: "MailError: down" }
expected_output:
  expected_steps:
    - step_name: 01-extract-serial
      output_contains: ["SERIAL: SN12345"]
  expected_function_calls: [check_warranty, { function_name: send_email }]
`;

describe('validateTransitionRules', () => {
  const rules = loadTransitionRules(loadWorkflow('warranty-email'));
  const missingInfo: ActualStep = { ...s01, next: '03d-request-serial', reason: 'No serial' };

  it("checks every step against the workflow's rules, whatever the case expects", () => {
    expect(rules.length).toBeGreaterThanOrEqual(5);
    expect(validateTransitionRules(rules, [s01, s02, s03a, s05]).passed).toBe(true);
    // A serial was extracted, yet the step asked for one: the rule fails even though no case expectation is given.
    const { failures } = validateTransitionRules(rules, [missingInfo]);
    expect(failures).toEqual([
      {
        index: 0,
        step: '01-extract-serial',
        expected: 'routes to 02-check-warranty',
        actual: '03d-request-serial',
        why: 'transition rule "a serial number found is looked up": serialNumber is present, but 01-extract-serial routed to 03d-request-serial (reason: No serial)',
      },
    ]);
    // Without a serial, the lookup is never the next step.
    const guessed = { ...s01, fields: { issueSummary: 'x' } };
    expect(validateTransitionRules(rules, [guessed]).failures[0]!.why).toContain('serialNumber is absent');
  });

  it('reads the data the step and the steps before it produced, and skips a step that failed', () => {
    const expired = { ...s02, fields: { warranty: { status: 'expired' } } };
    expect(validateTransitionRules(rules, [s01, expired]).failures[0]).toMatchObject({
      index: 1,
      expected: 'routes to 03c-expired-warranty',
      why: expect.stringContaining('warranty.status is "expired"'),
    });
    const failed = { ...missingInfo, next: '(failed)' };
    expect(validateTransitionRules(rules, [failed]).passed).toBe(true);
  });

  it('is part of validateCase, and a rule must name a step and its declared edges', () => {
    const legacy = EvalCaseSchema.parse({ ...parseEvalCase('d.yaml', CASE), expected_output: {} });
    expect(validateCase(legacy, [missingInfo], rules).passed).toBe(false);
    expect(validateCase(legacy, [missingInfo]).passed).toBe(true);
    expect(() => TransitionRuleSchema.parse({ name: 'r', step: '01-extract-serial', when: {}, next: [] })).toThrow();
    const def = loadWorkflow('warranty-email');
    const dir = mkdtempSync(join(tmpdir(), 'stepwise-rules-'));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const rulesFile = (step: string, next: string) =>
      writeFileSync(
        join(dir, 'eval-rules.yaml'),
        `rules:\n  - { name: r, step: ${step}, when: { present: [serialNumber] }, next: [${next}] }\n`,
      );
    rulesFile('01-extract-serial', '05-send-confirmation');
    expect(() => loadTransitionRules({ ...def, dir })).toThrow(
      /rules\.0\.next: "05-send-confirmation" is not a declared edge of 01-extract-serial/,
    );
    rulesFile('09-nowhere', 'DONE');
    expect(() => loadTransitionRules({ ...def, dir })).toThrow(/rules\.0\.step: unknown step "09-nowhere"/);
    expect(loadTransitionRules({ ...def, dir: join(dir, 'none') })).toEqual([]);
  });
});

describe('validateProcessingTime', () => {
  it('fails a case that took longer than its processing_time_ms, with both figures', () => {
    const timed = EvalCaseSchema.parse({
      ...parseEvalCase('d.yaml', CASE),
      expected_output: { processing_time_ms: 2000 },
    });
    expect(validateProcessingTime(timed, 2000).passed).toBe(true);
    expect(validateProcessingTime(timed, 2001).failures).toEqual([
      {
        index: null,
        step: null,
        expected: 'at most 2000 ms',
        actual: '2001 ms',
        why: 'the case took 2001 ms on the local runtime, over its processing_time_ms of 2000 ms',
      },
    ]);
    const untimed = EvalCaseSchema.parse({ ...parseEvalCase('d.yaml', CASE), expected_output: {} });
    expect(validateProcessingTime(untimed, 10_000_000).passed).toBe(true);
  });
});

describe('eval case schema', () => {
  it('parses an eval case, including the string shorthand for calls', () => {
    const c = parseEvalCase('demo.yaml', CASE);
    expect(c.expected_output.expected_function_calls).toEqual([
      { function_name: 'check_warranty' },
      { function_name: 'send_email' },
    ]);
    expect(c.expected_output.expected_steps![0]).toEqual({
      step_name: '01-extract-serial',
      output_contains: ['SERIAL: SN12345'],
    });
    // A case expects a successful execution unless it says otherwise.
    expect(c.expected_output.status).toBe('SUCCEEDED');
    expect(c.expected_output.error).toBeUndefined();
  });

  it('takes exactly one of input.email (email workflows) and input.payload (any other workflow)', () => {
    const payload = parseEvalCase(
      'p.yaml',
      CASE.replace(
        'email: { from: a@example.com, subject: Broken, body: "SN12345 is broken" }',
        'payload: { ticket: 42 }',
      ),
    );
    expect(payload.input).toMatchObject({ payload: { ticket: 42 } });
    expect(payload.input.email).toBeUndefined();
    expect(() =>
      parseEvalCase(
        'both.yaml',
        CASE.replace('  mock_function_responses:', '  payload: { ticket: 42 }\n  mock_function_responses:'),
      ),
    ).toThrow(/both\.yaml: input.*exactly one of email and payload/);
    expect(() =>
      parseEvalCase(
        'none.yaml',
        CASE.replace('  email: { from: a@example.com, subject: Broken, body: "SN12345 is broken" }\n', ''),
      ),
    ).toThrow(/exactly one of email and payload/);
  });

  it('may expect a failed execution with its error', () => {
    const failed = parseEvalCase(
      'f.yaml',
      CASE.replace('expected_output:\n', 'expected_output:\n  status: FAILED\n  error: MaxStepsExceeded\n'),
    );
    expect(failed.expected_output).toMatchObject({ status: 'FAILED', error: 'MaxStepsExceeded' });
    expect(() =>
      parseEvalCase('f.yaml', CASE.replace('expected_output:\n', 'expected_output:\n  status: TIMED_OUT\n')),
    ).toThrow(/f\.yaml: expected_output\.status/);
  });

  it('names the file and field of an invalid case', () => {
    expect(() =>
      parseEvalCase(
        'bad.yaml',
        CASE.replace('step_name: 01-extract-serial', 'step_name: 01-extract-serial\n      function_args: { a: 1 }'),
      ),
    ).toThrow('bad.yaml: expected_output.expected_steps.0.function_args: function_args needs function_call');
    expect(() => parseEvalCase('bad.yaml', CASE.replace('category', 'categroy'))).toThrow(DefinitionError);
    expect(() => parseEvalCase('bad.yaml', 'scenario_id: [')).toThrow(/bad\.yaml: \(yaml\)/);
  });

  it('validates legacy cases without expected_steps on their function calls only', () => {
    const legacy = EvalCaseSchema.parse({
      ...parseEvalCase('d.yaml', CASE),
      expected_output: { scenario_instruction_used: 'valid-warranty', expected_function_calls: ['send_email'] },
    });
    expect(validateCase(legacy, [s05]).passed).toBe(true);
    expect(validateCase(legacy, [s02]).failures.map((f) => f.why)).toEqual([
      'call 1 is check_warranty in 02-check-warranty, expected send_email',
    ]);
  });

  const dirs: string[] = [];
  afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
  it('refuses two cases with the same scenario id', () => {
    const dir = mkdtempSync(join(tmpdir(), 'stepwise-evals-'));
    dirs.push(dir);
    mkdirSync(join(dir, 'evals'));
    writeFileSync(join(dir, 'evals', 'a.yaml'), CASE);
    writeFileSync(join(dir, 'evals', 'b.yaml'), CASE);
    expect(() => loadEvalCases(dir)).toThrow(/scenario_id: duplicate "demo_001"/);
  });
});

describe('mockToolbox', () => {
  const ctx = { workflow: 'w', step: 's', execution: { id: 'i', name: 'n' }, input: { email: inboundEmail() } };
  const toolbox = mockToolbox(WARRANTY_TOOLS, parseEvalCase('d.yaml', CASE).input.mock_function_responses);

  it('answers with the mock, fails with { error }, and says when a mock is missing', async () => {
    expect(await toolbox.execute('check_warranty', { serialNumber: 'SN12345' }, ctx)).toEqual({
      tool: 'check_warranty',
      args: { serialNumber: 'SN12345' },
      result: { status: 'valid' },
    });
    expect(await toolbox.execute('send_email', { body: 'hi' }, ctx)).toEqual({
      tool: 'send_email',
      args: { body: 'hi' },
      error: 'MailError: down',
    });
    expect((await toolbox.execute('create_ticket', { serialNumber: 'SN1', issueSummary: 'x' }, ctx)).error).toBe(
      'the eval case has no mock response for create_ticket',
    );
  });

  it('validates arguments against the real tool definitions', async () => {
    expect((await toolbox.execute('send_email', { body: 'hi', to: 'attacker@example.com' }, ctx)).error).toMatch(
      /^ToolInputError: /,
    );
    expect((await toolbox.execute('delete_everything', {}, ctx)).error).toBe('unknown tool "delete_everything"');
    expect(toolbox.spec('create_ticket')).toBe(WARRANTY_TOOLS.create_ticket);
  });
});
