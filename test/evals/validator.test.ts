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
import { DESK_TOOLS } from '../runtime/tools/fixtures.ts';

const s01: ActualStep = {
  step: '01-read-request',
  next: '02-look-up',
  reason: 'Reference found',
  fields: { caseRef: 'C-10001', summary: 'Does not switch on' },
  toolCalls: [],
};
const s02: ActualStep = {
  step: '02-look-up',
  next: '03a-open-case',
  reason: 'Case status: open',
  fields: { record: { status: 'open' } },
  toolCalls: [{ tool: 'lookup_case', args: { caseRef: 'C-10001' }, result: { status: 'open' } }],
};
const s03a: ActualStep = {
  step: '03a-open-case',
  next: '05-confirm',
  reason: 'Follow-up filed',
  fields: { caseId: 'CASE-12345' },
  toolCalls: [
    { tool: 'route', args: { next: '04-hand-off' }, error: 'rejected: not a declared edge' },
    { tool: 'open_case', args: { caseRef: 'C-10001', summary: 'x' }, result: { caseId: 'CASE-12345' } },
  ],
};
const s05: ActualStep = {
  step: '05-confirm',
  next: 'DONE',
  reason: 'Confirmed',
  fields: {},
  toolCalls: [{ tool: 'send_email', args: { body: 'Follow-up CASE-12345 is filed.' }, result: { sent: true } }],
  reply: 'Follow-up CASE-12345 is filed.',
};

const step = (step_name: string, extra: Partial<ExpectedStep> = {}): ExpectedStep => ({
  step_name,
  output_contains: [],
  ...extra,
});
const VALID = [
  step('01-read-request', { output_contains: ['NEXT_STEP: 02-look-up', 'CASE: C-10001'] }),
  step('02-look-up', {
    function_call: 'lookup_case',
    function_args: { caseRef: 'C-10001' },
    output_contains: ['NEXT_STEP: 03a-open-case'],
  }),
  step('03a-open-case', { function_call: 'open_case', output_contains: ['CASE_ID: CASE-12345'] }),
  step('05-confirm', { function_call: 'send_email', output_contains: ['CASE-12345'] }),
];

describe('validateStepSequence', () => {
  it('passes a matching execution (the shortened label CASE: means caseRef)', () => {
    expect(validateStepSequence(VALID, [s01, s02, s03a, s05])).toEqual({ passed: true, failures: [] });
  });

  it('reports only the first diverging step, with the routing decision that caused it', () => {
    const wrong01: ActualStep = { ...s01, next: '03c-ask-ref', reason: 'No case reference found', fields: {} };
    const s03c: ActualStep = { step: '03c-ask-ref', next: 'DONE', reason: 'Asked', fields: {}, toolCalls: [] };
    const result = validateStepSequence(VALID, [wrong01, s03c]);
    expect(result.passed).toBe(false);
    // Step 01's missing output is the first divergence; the wrong step after it is a consequence.
    expect(result.failures.map((f) => [f.index, f.step, f.why])).toEqual([
      [0, '01-read-request', 'the step\'s output does not contain "NEXT_STEP: 02-look-up"'],
      [0, '01-read-request', 'the step\'s output does not contain "CASE: C-10001"'],
    ]);
    expect(result.failures[0]!.actual).toContain('NEXT_STEP: 03c-ask-ref');

    const sequenceOnly = validateStepSequence([step('01-read-request'), step('02-look-up')], [wrong01, s03c]);
    expect(sequenceOnly.failures).toEqual([
      {
        index: 1,
        step: '02-look-up',
        expected: '02-look-up',
        actual: '03c-ask-ref',
        why: 'wrong step: 01-read-request routed to 03c-ask-ref (reason: No case reference found)',
      },
    ]);
  });

  it('reports a missing step and an unexpected extra step', () => {
    expect(validateStepSequence(VALID, [s01, s02]).failures).toEqual([
      {
        index: 2,
        step: '03a-open-case',
        expected: '03a-open-case',
        actual: '(none)',
        why: 'missing step: the execution ended after 02-look-up (next: 03a-open-case, reason: Case status: open)',
      },
    ]);
    expect(validateStepSequence(VALID.slice(0, 2), [s01, s02, s03a]).failures).toEqual([
      {
        index: 2,
        step: '03a-open-case',
        expected: '(end)',
        actual: '03a-open-case',
        why: 'unexpected extra step: 02-look-up routed to 03a-open-case (reason: Case status: open)',
      },
    ]);
    expect(validateStepSequence(VALID, []).failures[0]!.why).toBe('missing step: no step ran');
  });

  it('reports a tool the step did not call, and a call with other arguments', () => {
    const noCall = validateStepSequence(VALID.slice(0, 2), [s01, { ...s02, toolCalls: [] }]);
    expect(noCall.failures).toEqual([
      {
        index: 1,
        step: '02-look-up',
        expected: 'calls lookup_case',
        actual: 'calls: none',
        why: 'lookup_case was not called in this step',
      },
    ]);
    const otherArgs = validateStepSequence(VALID.slice(0, 2), [
      s01,
      { ...s02, toolCalls: [{ ...s02.toolCalls[0]!, args: { caseRef: 'C-99999' } }] },
    ]);
    expect(otherArgs.failures[0]).toMatchObject({
      expected: 'lookup_case {"caseRef":"C-10001"}',
      actual: 'lookup_case {"caseRef":"C-99999"}',
      why: 'lookup_case was called with other arguments',
    });
  });

  it('does not count rejected route attempts as tool calls', () => {
    const onlyRoute = { ...s03a, toolCalls: [s03a.toolCalls[0]!] };
    expect(validateStepSequence(VALID.slice(0, 3), [s01, s02, onlyRoute]).failures[0]!.why).toBe(
      'open_case was not called in this step',
    );
  });
});

describe('validateFunctionCalls', () => {
  const all = [s01, s02, s03a, s05];
  const expected = (...names: string[]) => names.map((function_name) => ({ function_name }));

  it('passes the calls of the whole execution in order, ignoring route', () => {
    expect(
      validateFunctionCalls(
        [{ function_name: 'lookup_case', arguments: { caseRef: 'C-10001' } }, ...expected('open_case', 'send_email')],
        all,
      ).passed,
    ).toBe(true);
  });

  it.each([
    [['lookup_case', 'open_case'], 'unexpected call send_email in 05-confirm'],
    [['lookup_case', 'open_case', 'send_email', 'send_email'], 'missing call send_email'],
    [['lookup_case', 'send_email', 'open_case'], 'call 2 is open_case in 03a-open-case, expected send_email'],
  ])('reports %j: %s', (names, why) => {
    expect(validateFunctionCalls(expected(...names), all).failures).toEqual([
      {
        index: null,
        step: null,
        expected: names.join(', '),
        actual: 'lookup_case (02-look-up), open_case (03a-open-case), send_email (05-confirm)',
        why,
      },
    ]);
  });

  it('reports other arguments', () => {
    const [failure] = validateFunctionCalls(
      [{ function_name: 'lookup_case', arguments: { caseRef: 'C-1' } }, ...expected('open_case', 'send_email')],
      all,
    ).failures;
    expect(failure!.why).toBe(
      'lookup_case in 02-look-up was called with {"caseRef":"C-10001"}, expected {"caseRef":"C-1"}',
    );
  });
});

const CASE = `
scenario_id: demo_001
description: Demo.
category: valid-case
input:
  email: { from: a@example.com, subject: Broken, body: "C-10001 is broken" }
  mock_function_responses:
    lookup_case: { status: open }
    send_email: { error: "MailError: down" }
expected_output:
  expected_steps:
    - step_name: 01-read-request
      output_contains: ["CASE: C-10001"]
  expected_function_calls: [lookup_case, { function_name: send_email }]
`;

describe('validateTransitionRules', () => {
  const rules = loadTransitionRules(loadWorkflow('case-desk'));
  const missingInfo: ActualStep = { ...s01, next: '03c-ask-ref', reason: 'No reference' };

  it("checks every step against the workflow's rules, whatever the case expects", () => {
    expect(rules).toHaveLength(4);
    expect(validateTransitionRules(rules, [s01, s02, s03a, s05]).passed).toBe(true);
    // A reference was extracted, yet the step asked for one: the rule fails even though no case expectation is given.
    const { failures } = validateTransitionRules(rules, [missingInfo]);
    expect(failures).toEqual([
      {
        index: 0,
        step: '01-read-request',
        expected: 'routes to 02-look-up',
        actual: '03c-ask-ref',
        why: 'transition rule "a case reference found is looked up": caseRef is present, but 01-read-request routed to 03c-ask-ref (reason: No reference)',
      },
    ]);
    // Without a reference, the lookup is never the next step.
    const guessed = { ...s01, fields: { summary: 'x' } };
    expect(validateTransitionRules(rules, [guessed]).failures[0]!.why).toContain('caseRef is absent');
  });

  it('reads the data the step and the steps before it produced, and skips a step that failed', () => {
    const unknown = { ...s02, fields: { record: { status: 'not_found' } } };
    expect(validateTransitionRules(rules, [s01, unknown]).failures[0]).toMatchObject({
      index: 1,
      expected: 'routes to 03b-not-found',
      why: expect.stringContaining('record.status is "not_found"'),
    });
    const failed = { ...missingInfo, next: '(failed)' };
    expect(validateTransitionRules(rules, [failed]).passed).toBe(true);
  });

  it('is part of validateCase, and a rule must name a step and its declared edges', () => {
    const legacy = EvalCaseSchema.parse({ ...parseEvalCase('d.yaml', CASE), expected_output: {} });
    expect(validateCase(legacy, [missingInfo], rules).passed).toBe(false);
    expect(validateCase(legacy, [missingInfo]).passed).toBe(true);
    expect(() => TransitionRuleSchema.parse({ name: 'r', step: '01-read-request', when: {}, next: [] })).toThrow();
    const def = loadWorkflow('case-desk');
    const dir = mkdtempSync(join(tmpdir(), 'stepwise-rules-'));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const rulesFile = (step: string, next: string) =>
      writeFileSync(
        join(dir, 'eval-rules.yaml'),
        `rules:\n  - { name: r, step: ${step}, when: { present: [caseRef] }, next: [${next}] }\n`,
      );
    rulesFile('01-read-request', '05-confirm');
    expect(() => loadTransitionRules({ ...def, dir })).toThrow(
      /rules\.0\.next: "05-confirm" is not a declared edge of 01-read-request/,
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
      { function_name: 'lookup_case' },
      { function_name: 'send_email' },
    ]);
    expect(c.expected_output.expected_steps![0]).toEqual({
      step_name: '01-read-request',
      output_contains: ['CASE: C-10001'],
    });
    // A case expects a successful execution unless it says otherwise.
    expect(c.expected_output.status).toBe('SUCCEEDED');
    expect(c.expected_output.error).toBeUndefined();
  });

  it('takes exactly one of input.email (email workflows) and input.payload (any other workflow)', () => {
    const payload = parseEvalCase(
      'p.yaml',
      CASE.replace(
        'email: { from: a@example.com, subject: Broken, body: "C-10001 is broken" }',
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
        CASE.replace('  email: { from: a@example.com, subject: Broken, body: "C-10001 is broken" }\n', ''),
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
        CASE.replace('step_name: 01-read-request', 'step_name: 01-read-request\n      function_args: { a: 1 }'),
      ),
    ).toThrow('bad.yaml: expected_output.expected_steps.0.function_args: function_args needs function_call');
    expect(() => parseEvalCase('bad.yaml', CASE.replace('category', 'categroy'))).toThrow(DefinitionError);
    expect(() => parseEvalCase('bad.yaml', 'scenario_id: [')).toThrow(/bad\.yaml: \(yaml\)/);
  });

  it('validates legacy cases without expected_steps on their function calls only', () => {
    const legacy = EvalCaseSchema.parse({
      ...parseEvalCase('d.yaml', CASE),
      expected_output: { scenario_instruction_used: 'valid-case', expected_function_calls: ['send_email'] },
    });
    expect(validateCase(legacy, [s05]).passed).toBe(true);
    expect(validateCase(legacy, [s02]).failures.map((f) => f.why)).toEqual([
      'call 1 is lookup_case in 02-look-up, expected send_email',
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
  const toolbox = mockToolbox(DESK_TOOLS, parseEvalCase('d.yaml', CASE).input.mock_function_responses);

  it('answers with the mock, fails with { error }, and says when a mock is missing', async () => {
    expect(await toolbox.execute('lookup_case', { caseRef: 'C-10001' }, ctx)).toEqual({
      tool: 'lookup_case',
      args: { caseRef: 'C-10001' },
      result: { status: 'open' },
    });
    expect(await toolbox.execute('send_email', { body: 'hi' }, ctx)).toEqual({
      tool: 'send_email',
      args: { body: 'hi' },
      error: 'MailError: down',
    });
    expect((await toolbox.execute('open_case', { caseRef: 'C-10001', summary: 'x' }, ctx)).error).toBe(
      'the eval case has no mock response for open_case',
    );
  });

  it('validates arguments against the real tool definitions', async () => {
    expect((await toolbox.execute('send_email', { body: 'hi', to: 'attacker@example.com' }, ctx)).error).toMatch(
      /^ToolInputError: /,
    );
    expect((await toolbox.execute('delete_everything', {}, ctx)).error).toBe('unknown tool "delete_everything"');
    expect(toolbox.spec('open_case')).toBe(DESK_TOOLS.open_case);
  });
});
