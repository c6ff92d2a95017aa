/**
 * The reflection's decision (`action`) is an enum tied to the route: a model writing `Continue`
 * is read as `continue` and the code steps after it run; a decision that is not one of
 * continue/done/ask, is missing, or disagrees with the route is refused at the step's route check,
 * like an undeclared edge (told once, then `InvalidModelOutputError` for the ASL's retry/fallback).
 */
import { describe, expect, it } from 'vitest';
import { InvalidModelOutputError } from '../../../src/core/errors.ts';
import { getStep } from '../../../src/definitions/workflow/loader.ts';
import { ROUTE_TOOL, routeToolSpec } from '../../../src/runtime/contracts/prompt.ts';
import type { StepInput } from '../../../src/runtime/contracts/step.ts';
import { loadPlugin } from '../../../src/runtime/plugin.ts';
import { runLlmStep } from '../../../src/runtime/steps/runner.ts';
import { allowListed } from '../../../src/runtime/steps/step-toolbox.ts';
import { createToolbox } from '../../../src/runtime/tools/toolbox.ts';
import { scriptedModel, toolUse } from '../../runtime/steps/fixtures.ts';

const plugin = await loadPlugin('tool-loop');
const toolbox = createToolbox(Object.values(plugin.tools), { clock: () => new Date('2026-11-24T12:00:00Z') });
const EVENT = {
  id: 'g/t#1',
  toolName: 'calculate',
  args: { expression: '2 + 2' },
  result: { value: 4, text: '2 + 2 = 4' },
  success: true,
  timestamp: '2026-11-24T12:00:00Z',
  groupId: 'g/t',
  iteration: 1,
};
const DATA = {
  turnId: 't',
  groupId: 'g/t',
  originalQuery: 'what is 2 + 2 and 10 km to mi',
  remainingQuery: 'what is 2 + 2 and 10 km to mi',
  groupToolResults: [EVENT],
  reminders: [],
  groupSummary: '2 + 2 = 4',
};

const stepInput = (step: string, data: Record<string, unknown>): StepInput => ({
  workflow: 'tool-loop',
  step,
  input: { query: DATA.originalQuery, turnId: 't' },
  previous: { step: '03-execute', next: step, reason: 'r', decidedBy: 'code', fields: {}, data, count: 3 },
  error: null,
  count: 4,
  counters: { iteration: 1 },
  execution: { id: 'arn:x', name: 'exec-1' },
});

/** 04-reflect with a model that routes with each given `route` input in turn. */
function reflect(...routes: Record<string, unknown>[]) {
  const { model, requests } = scriptedModel(routes.map((r, i) => [toolUse(ROUTE_TOOL, r, `r${i}`)]));
  const step = getStep(plugin.def, '04-reflect');
  const result = runLlmStep({
    def: plugin.def,
    step,
    input: stepInput(step.name, DATA),
    untrusted: undefined,
    untrustedFields: { input: ['query'], data: [] },
    model,
    toolbox: allowListed(toolbox, step),
  });
  return { result, requests };
}

/** A code step of the loop on the data the reflection left. */
function runCode(name: string, data: Record<string, unknown>) {
  const step = getStep(plugin.def, name);
  const tool = { workflow: 'tool-loop', step: name, execution: { id: 'arn:x', name: 'exec-1' }, input: {} };
  return plugin.codeSteps[step.handler!]!({
    def: plugin.def,
    step,
    input: stepInput(name, data),
    toolbox: allowListed(toolbox, step),
    tool,
  });
}

describe("04-reflect's decision", () => {
  it('reads `Continue` and ` DONE ` as the declared values, and the code steps after it run on them', async () => {
    const going = await reflect({
      next: '02-select-tool',
      reason: 'More to do.',
      action: 'Continue',
      remainingQuery: '10 km to mi',
    }).result;
    expect(going.fields.action).toBe('continue');
    const executed = await runCode('03-execute', {
      ...DATA,
      ...going.fields,
      selectedTool: 'calculate',
      toolArgs: { expression: '1 + 1' },
    });
    expect(executed.next).toBe('04-reflect');

    const finished = await reflect({ next: '05-respond', reason: 'Answered.', action: ' DONE ', summary: '2 + 2 = 4' })
      .result;
    expect(finished.fields.action).toBe('done');
    const answered = await runCode('05-respond', { ...DATA, ...finished.fields });
    expect(answered.fields).toMatchObject({ branch: 'done', response: '2 + 2 = 4' });
  });

  it('refuses a decision that disagrees with the route, telling the model which route it means', async () => {
    const { result, requests } = reflect(
      { next: '02-select-tool', reason: 'Answered.', action: 'done', summary: '2 + 2 = 4' },
      { next: '05-respond', reason: 'Answered.', action: 'done', summary: '2 + 2 = 4' },
    );
    const ran = await result;
    expect(ran.next).toBe('05-respond');
    const told = JSON.stringify(requests[1]!.messages.at(-1));
    expect(told).toContain('action: \\"done\\" routes to 05-respond, not to 02-select-tool');
    expect(ran.toolCalls[0]).toMatchObject({
      tool: ROUTE_TOOL,
      error: expect.stringMatching(/^rejected: route input action/),
    });
  });

  it('fails the step with InvalidModelOutputError when the decision stays unknown, missing or against the route', async () => {
    for (const [first, second] of [
      [{ action: 'maybe' }, { action: 'perhaps' }],
      [{}, {}],
      [
        { action: 'ask', next: '02-select-tool' },
        { action: 'continue', next: '05-respond' },
      ],
    ]) {
      const route = (r: Record<string, unknown>) => ({ next: '05-respond', reason: 'r', ...r });
      await expect(reflect(route(first!), route(second!)).result).rejects.toBeInstanceOf(InvalidModelOutputError);
    }
  });

  it('shows the model the three values in the route tool, and requires the decision', () => {
    const json = routeToolSpec(getStep(plugin.def, '04-reflect')).inputSchema.json as {
      properties: Record<string, { enum?: string[] }>;
      required: string[];
    };
    expect(json.properties.action!.enum).toEqual(['continue', 'done', 'ask']);
    expect(json.required).toEqual(['next', 'reason', 'action']);
  });
});
