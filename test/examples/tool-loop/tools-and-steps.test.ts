/**
 * The tool loop's own code: the calculator parses with jsep and evaluates arithmetic only (never
 * `eval`), the unit converter and the clock; the execute step runs exactly the selected tool
 * through the step's allow-listed toolbox (an invented or unlisted name is refused, never run) and
 * keeps this group's events only; the group start keeps the original query apart and carries
 * reminders; the answer step works as the fallback.
 */
import { describe, expect, it } from 'vitest';
import { calculate } from '../../../lambdas/workflows/tool-loop/tools/calculate.ts';
import { convert } from '../../../lambdas/workflows/tool-loop/tools/convert-units.ts';
import { getStep } from '../../../src/definitions/workflow/loader.ts';
import type { StepInput, ToolCallRecord } from '../../../src/runtime/contracts/step.ts';
import { loadPlugin } from '../../../src/runtime/plugin.ts';
import { allowListed } from '../../../src/runtime/steps/step-toolbox.ts';
import { createToolbox } from '../../../src/runtime/tools/toolbox.ts';
import type { Toolbox } from '../../../src/runtime/tools/types.ts';

const plugin = await loadPlugin('tool-loop');
const NOW = new Date('2026-11-24T23:30:00Z');
const toolbox = createToolbox(Object.values(plugin.tools), { clock: () => NOW });
const ctx = { workflow: 'tool-loop', step: '03-execute', execution: { id: 'arn:x', name: 'exec-1' }, input: {} };

const stepInput = (step: string, data: Record<string, unknown>, extra: Partial<StepInput> = {}): StepInput => ({
  workflow: 'tool-loop',
  step,
  input: { query: 'q', sessionId: 's', turnId: 't2' },
  previous: { step: 'x', next: step, reason: 'r', decidedBy: 'code', fields: {}, data, count: 3 },
  error: null,
  count: 4,
  execution: { id: 'arn:x', name: 'exec-1' },
  ...extra,
});
const runCode = (step: string, input: StepInput, box: Toolbox = toolbox) => {
  const def = getStep(plugin.def, step);
  return plugin.codeSteps[def.handler!]!({
    def: plugin.def,
    step: def,
    input,
    toolbox: allowListed(box, def),
    tool: ctx,
  });
};

describe('tools', () => {
  it('calculate: arithmetic with precedence, functions and constants', async () => {
    expect(calculate('12 * (3 + 4)')).toBe(84);
    expect(calculate('2 ^ 10 - sqrt(16)')).toBe(1020);
    expect(calculate('round(pi * 100)')).toBe(314);
    // A sign binds looser than a power, and powers group to the right, as in arithmetic.
    expect(calculate('-2 ^ 2')).toBe(-4);
    expect(calculate('2 ^ 3 ^ 2')).toBe(512);
    expect(calculate('round(-2.5) + log(8, 2) + max(1, 7, 3)')).toBe(7);
    expect(await toolbox.execute('calculate', { expression: '0.1 + 0.2' }, ctx)).toMatchObject({
      result: { value: 0.30000000000000004, text: '0.1 + 0.2 = 0.3' },
    });
  });

  it('calculate: refuses anything beyond arithmetic, and never runs JavaScript', async () => {
    for (const expression of [
      'x = 5',
      'import({}, {})',
      '"a" + "b"',
      '5 km to mi',
      '[1, 2]',
      'evaluate("1")',
      'f(x) = x',
      '1 / 0',
      'Math.max(1)',
      'constructor',
      '1 & 2',
      'true + 1',
    ]) {
      const call = await toolbox.execute('calculate', { expression }, ctx);
      expect(call.error, expression).toMatch(/^(UnsupportedExpressionError|SyntaxError|Error)/);
      expect(call.result).toBeUndefined();
    }
  });

  it('convert_units: length, mass and temperature, refusing mixed dimensions and unknown units', async () => {
    expect(convert(10, 'km', 'mi').value).toBeCloseTo(6.2137119, 6);
    expect(convert(100, 'c', 'f').value).toBeCloseTo(212, 9);
    expect(convert(1, 'lb', 'oz').value).toBeCloseTo(16, 9);
    expect(await toolbox.execute('convert_units', { quantity: '5 mi', to: 'km' }, ctx)).toMatchObject({
      result: { text: '5 mi = 8.04672 km', unit: 'km' },
    });
    expect((await toolbox.execute('convert_units', { quantity: '5 kg', to: 'km' }, ctx)).error).toBe(
      'UnknownUnitError: cannot convert mass (kg) to length (km)',
    );
    expect((await toolbox.execute('convert_units', { quantity: 'five km', to: 'mi' }, ctx)).error).toMatch(
      /^ToolInputError: quantity/,
    );
  });

  it('current_time: the toolbox clock in the given timezone; UTC with a reminder when none is given', async () => {
    const tokyo = (await toolbox.execute('current_time', { timezone: 'Asia/Tokyo' }, ctx)).result as {
      iso: string;
      text: string;
    };
    expect(tokyo.iso).toBe(NOW.toISOString());
    // Already the next day there (the exact punctuation is the ICU version's).
    expect(tokyo.text).toMatch(/^Wednesday,? 25 November 2026 at 08:30 in Asia\/Tokyo$/);
    expect((await toolbox.execute('current_time', {}, ctx)).result).toMatchObject({
      timezone: 'UTC',
      reminder: 'No timezone was given: times are in UTC unless the user names one.',
    });
    expect((await toolbox.execute('current_time', { timezone: 'Mars/Olympus' }, ctx)).error).toMatch(
      /^UnknownTimezoneError/,
    );
  });
});

describe("the loop's code steps", () => {
  const group = {
    turnId: 't2',
    groupId: 's/t2',
    originalQuery: 'what is 2 ^ 10',
    remainingQuery: 'what is 2 ^ 10',
    groupToolResults: [],
    reminders: [],
  };

  it('03-execute runs the one selected tool and appends the event to this group only', async () => {
    const earlier = {
      id: 's/t2#1',
      toolName: 'calculate',
      args: { expression: '1 + 1' },
      result: { text: '1 + 1 = 2' },
      success: true,
      timestamp: NOW.toISOString(),
      groupId: 's/t2',
      iteration: 1,
    };
    const out = await runCode(
      '03-execute',
      stepInput(
        '03-execute',
        { ...group, groupToolResults: [earlier], selectedTool: 'current_time', toolArgs: {} },
        { counters: { iteration: 2 } },
      ),
    );
    expect(out.toolCalls.map((c) => c.tool)).toEqual(['current_time']);
    const events = out.fields.groupToolResults as {
      id: string;
      toolName: string;
      success: boolean;
      groupId: string;
      iteration: number;
    }[];
    expect(events.map((e) => [e.id, e.toolName, e.success, e.iteration])).toEqual([
      ['s/t2#1', 'calculate', true, 1],
      ['s/t2#2', 'current_time', true, 2],
    ]);
    expect(out.fields.reminders).toEqual([
      {
        toolName: 'current_time',
        reason: 'No timezone was given: times are in UTC unless the user names one.',
        sourceToolEventId: 's/t2#2',
      },
    ]);
    expect(out.fields.groupSummary).toMatch(/^1 \+ 1 = 2; .* in UTC$/);
    // The working state names the iteration and the tool it ran.
    expect(out.fields).toMatchObject({ iteration: 2, currentTool: 'current_time' });
  });

  it('03-execute never runs a tool outside its allow-list: an invented name is refused and recorded as a failed event', async () => {
    const ran: string[] = [];
    const spy: Toolbox = {
      spec: toolbox.spec,
      execute: async (name, args, c): Promise<ToolCallRecord> => (ran.push(name), toolbox.execute(name, args, c)),
    };
    const out = await runCode(
      '03-execute',
      stepInput(
        '03-execute',
        { ...group, selectedTool: 'delete_everything', toolArgs: {} },
        { counters: { iteration: 1 } },
      ),
      spy,
    );
    expect(ran).toEqual([]);
    expect(out.toolCalls[0]!.error).toMatch(
      /^ToolNotAllowedError: tool "delete_everything" is not allowed in step 03-execute/,
    );
    expect((out.fields.groupToolResults as { success: boolean }[])[0]!.success).toBe(false);
    expect(out.next).toBe('04-reflect');
  });

  it('01-start-group starts a new group at iteration 1 of 6: original and remaining query apart, no tool results, reminders carried forward', async () => {
    const reminders = [{ toolName: 'current_time', reason: 'UTC', sourceToolEventId: 's/t1#1' }];
    const input = stepInput(
      '01-start-group',
      { ...group, groupToolResults: [{ stale: true }] },
      {
        input: {
          query: 'what is 3 * 3',
          sessionId: 's',
          turnId: 't3',
          inputSource: 'voice',
          previousResponse: { groupId: 's/t2', branch: 'done', reminders },
        },
      },
    );
    const out = await runCode('01-start-group', input);
    expect(out.fields).toEqual({
      turnId: 't3',
      groupId: 's/t3',
      inputSource: 'voice',
      iteration: 1,
      maxIterations: 6,
      originalQuery: 'what is 3 * 3',
      remainingQuery: 'what is 3 * 3',
      groupToolResults: [],
      reminders,
    });
    // An answer to the previous turn's question is read with the question's query.
    const answer = await runCode(
      '01-start-group',
      stepInput(
        '01-start-group',
        {},
        {
          input: {
            query: '10 km to mi',
            turnId: 't4',
            previousResponse: { branch: 'ask', originalQuery: 'convert this' },
          },
        },
      ),
    );
    expect(answer.fields).toMatchObject({
      originalQuery: 'convert this (clarified: 10 km to mi)',
      remainingQuery: '10 km to mi',
      groupId: 'session/t4',
      inputSource: 'text',
    });
  });

  it('05-respond answers with the summary or the question, and as the fallback apologises with the partial work', async () => {
    expect(
      (await runCode('05-respond', stepInput('05-respond', { ...group, action: 'done', summary: '2 ^ 10 = 1024' })))
        .fields,
    ).toMatchObject({ response: '2 ^ 10 = 1024', branch: 'done' });
    expect(
      (await runCode('05-respond', stepInput('05-respond', { ...group, action: 'ask', question: 'Which unit?' })))
        .fields,
    ).toMatchObject({ response: 'Which unit?', branch: 'ask' });
    const failed = await runCode(
      '05-respond',
      stepInput(
        '05-respond',
        { ...group, groupSummary: '1 + 1 = 2' },
        { error: { Error: 'InvalidModelOutputError', Cause: '...' } },
      ),
    );
    expect(failed.fields).toMatchObject({
      response: 'Sorry, I could not finish this request (InvalidModelOutputError). So far: 1 + 1 = 2.',
      branch: 'failed',
    });
  });

  it("05-respond gives the turn's output: at IterationLimit the partial summary is the response, with a stateSummary", async () => {
    const limited = await runCode(
      '05-respond',
      stepInput(
        '05-respond',
        { ...group, action: 'continue', remainingQuery: 'the rest', groupSummary: '1 + 1 = 2' },
        { error: { Error: 'IterationLimit', Cause: 'counter iteration reached its cap of 6' } },
      ),
    );
    expect(limited.fields).toEqual({
      response: 'I stopped after 6 tool runs without finishing. What I found so far: 1 + 1 = 2.',
      stateSummary: expect.stringMatching(/^group .+; iteration \d+ of 6; tools: .*; remaining: the rest/),
      branch: 'limit',
    });
  });
});
