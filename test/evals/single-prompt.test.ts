/**
 * The single-prompt mode, for the A/B against step mode: one LLM step with the whole instruction set and every tool,
 * judged
 * on the same eval cases by their tool calls. A scripted model stands in for Bedrock.
 */
import { describe, expect, it } from 'vitest';
import { loadEvalCases } from '../../src/definitions/eval-cases.ts';
import { runSinglePromptEvalCases } from '../../src/evals/single-prompt.ts';
import type { ContentBlock } from '../../src/runtime/contracts/model-port.ts';
import { loadPlugin } from '../../src/runtime/plugin.ts';
import { SINGLE_PROMPT_STEP, singlePromptStep } from '../../src/runtime/steps/single-prompt.ts';
import { scriptedModel, toolUse } from '../runtime/steps/fixtures.ts';

const plugin = await loadPlugin('case-desk');
const valid = loadEvalCases(plugin.def.dir).find((c) => c.scenario_id === 'valid_case_001')!;

const use = (name: string, input: unknown): ContentBlock => toolUse(name, input, name);

describe('the single-prompt agent on the eval cases', () => {
  it('is one step holding every step instruction and every tool', () => {
    const step = singlePromptStep(plugin.def);
    expect(step).toMatchObject({
      name: SINGLE_PROMPT_STEP,
      kind: 'llm',
      next: ['DONE'],
      tools: plugin.def.manifest.tools,
      // The step workflow's bound arguments and output guard: the rollback target is no less safe.
      bind: { open_case: { caseRef: 'data.record.ref', product: 'data.record.product' } },
      guard: { rules: 'guards/reply.yaml', onViolation: 'regenerate', maxRegenerations: 1 },
    });
    for (const s of plugin.def.steps) expect(step.instruction).toContain(`## Part ${s.name}`);
  });

  it('passes a case whose tool calls match, in one conversation, and reports its model calls', async () => {
    const { model, requests } = scriptedModel([
      [use('lookup_case', { caseRef: 'C-10001' })],
      [use('open_case', { summary: 'The desk lamp switches off.', priority: 'normal' })],
      [use('send_email', { body: 'Hello, we filed follow-up CASE-1A2B3C4D5E.' })],
      [use('route', { next: 'DONE', reason: 'Confirmed the follow-up.' })],
    ]);
    const report = await runSinglePromptEvalCases(plugin, [valid], model);
    expect(report).toMatchObject({ passed: 1, total: 1 });
    expect(report.cases[0]!.steps).toEqual([
      expect.objectContaining({
        name: SINGLE_PROMPT_STEP,
        next: 'DONE',
        usage: expect.objectContaining({ modelCalls: 4, inputTokens: 400 }),
      }),
    ]);
    // The whole instruction set and every tool go out with every call.
    expect(requests[0]!.toolConfig!.tools.map((t) => t.toolSpec.name).sort()).toEqual([
      'lookup_case',
      'open_case',
      'route',
      'send_email',
    ]);
    expect(JSON.stringify(requests[3]!.system)).toContain('Part 05-confirm');
  });

  it('fails a case whose tool calls differ', async () => {
    const { model } = scriptedModel([
      [use('lookup_case', { caseRef: 'C-10001' })],
      [use('send_email', { body: 'Hello.' })],
      [use('route', { next: 'DONE', reason: 'x' })],
    ]);
    const report = await runSinglePromptEvalCases(plugin, [valid], model);
    expect(report.passed).toBe(0);
    expect(report.cases[0]!.failures.length).toBeGreaterThan(0);
  });

  it('reports a run that fails as a failed case naming the error, and goes on with the next case', async () => {
    const { model } = scriptedModel([[use('lookup_case', { caseRef: 'C-10001' })]]);
    const failing = { ...model, converse: async () => Promise.reject(new Error('the model is down')) };
    const report = await runSinglePromptEvalCases(plugin, [valid, valid], failing);
    expect(report.passed).toBe(0);
    expect(report.cases).toHaveLength(2);
    expect(report.cases[0]!.failures).toEqual([
      expect.objectContaining({
        expected: 'the run ends',
        actual: 'Error: the model is down',
        why: 'the single-prompt run failed',
      }),
    ]);
  });

  it("asks the model about an api workflow's input with its untrusted fields shown apart, as the step handler does", async () => {
    const api = await loadPlugin('consensus-pick');
    const [evalCase] = loadEvalCases(api.def.dir).filter((c) => c.scenario_id === 'two_tools_001');
    const { model, requests } = scriptedModel([[use('route', { next: 'DONE', reason: 'Nothing to do.' })]]);
    const report = await runSinglePromptEvalCases(api, [evalCase!], model);
    expect(report.cases[0]!.steps).toEqual([expect.objectContaining({ name: SINGLE_PROMPT_STEP, next: 'DONE' })]);
    const context = JSON.parse((requests[0]!.messages[0]!.content[1] as { text: string }).text);
    expect(context.untrusted).toEqual({ query: 'add 2 + 3 and upper hello' });
    expect(context.input).not.toHaveProperty('query');
  });

  it('refuses the offline stand-in, which has no rules for one call with everything', async () => {
    await expect(
      runSinglePromptEvalCases(plugin, [valid], {
        name: 'offline',
        converse: async () => Promise.reject(new Error('unused')),
      }),
    ).rejects.toThrow(/--model bedrock/);
  });
});
