/**
 * The expert analysis is checked in code: it may cite only steps the history recorded and no later
 * backtrack revised; one that cites any other goes to a person instead of out as the conclusion.
 */
import { describe, expect, it } from 'vitest';
import { citedSteps, type HistoryEntry, invalidCitations } from '../../../lambdas/workflows/investigation/rules.ts';
import { getStep } from '../../../src/definitions/workflow/loader.ts';
import type { StepInput } from '../../../src/runtime/contracts/step.ts';
import { loadPlugin } from '../../../src/runtime/plugin.ts';
import { allowListed } from '../../../src/runtime/steps/step-toolbox.ts';
import { createToolbox } from '../../../src/runtime/tools/toolbox.ts';

const entry = (step_number: number, over: Partial<HistoryEntry> = {}): HistoryEntry => ({
  step_number,
  total_steps: 3,
  confidence: 'medium',
  findings: `finding ${step_number}`,
  files_checked: [],
  relevant_context: [],
  next_step_required: true,
  ...over,
});
/** Step 3 backtracked from step 2: step 2's findings were corrected. */
const HISTORY = [entry(1), entry(2), entry(3, { revises: [2], next_step_required: false })];

describe('citedSteps', () => {
  it('reads "(step N)", "(steps N, M)" and "(steps N and M)" in the text, and the cited_steps list', () => {
    expect(citedSteps('Pool exhausted (step 1). Fixed by the limit (steps 3, 4 and 6).', '')).toEqual([1, 3, 4, 6]);
    expect(citedSteps('No citation in the text.', '2, 5')).toEqual([2, 5]);
    expect(citedSteps('Root cause (Step 3); see (step 3).', '[3]')).toEqual([3]);
    // Numbers outside a citation are not citations.
    expect(citedSteps('Retries rose 300% in 2 minutes.', '')).toEqual([]);
  });
});

describe('invalidCitations', () => {
  it('refuses a step never recorded and one a backtrack revised, and accepts the rest', () => {
    expect(invalidCitations(HISTORY, [1, 3])).toEqual([]);
    expect(invalidCitations(HISTORY, [1, 2, 7])).toEqual([
      { step: 2, why: 'revised by a backtrack' },
      { step: 7, why: 'not recorded' },
    ]);
  });
});

describe('07-check-citations and 04-escalate', async () => {
  const plugin = await loadPlugin('investigation');
  const toolbox = createToolbox(Object.values(plugin.tools));
  const run = (name: string, data: Record<string, unknown>, previous: Partial<StepInput['previous']> = {}) => {
    const step = getStep(plugin.def, name);
    const input: StepInput = {
      workflow: 'investigation',
      step: name,
      input: { request: 'why did the API time out?' },
      previous: {
        step: '06-expert-analysis',
        next: name,
        reason: 'r',
        decidedBy: 'model',
        fields: {},
        data,
        count: 9,
        ...previous,
      },
      error: null,
      count: 10,
      execution: { id: 'arn:x', name: 'exec-1' },
    };
    const tool = { workflow: 'investigation', step: name, execution: input.execution, input: input.input };
    return plugin.codeSteps[step.handler!]!({
      def: plugin.def,
      step,
      input,
      toolbox: allowListed(toolbox, step),
      tool,
    });
  };

  it('ends the investigation when every cited step is recorded and current', async () => {
    const out = await run('07-check-citations', {
      history: HISTORY,
      analysis: 'Pool exhausted (steps 1, 3).',
      cited_steps: '1, 3',
    });
    expect(out).toMatchObject({ next: 'DONE', fields: { citations: { cited: [1, 3], invalid: [] } } });
  });

  it('sends an analysis that rests on a revised step to a person, who is told which citations failed', async () => {
    const checked = await run('07-check-citations', {
      history: HISTORY,
      analysis: 'The cache grows without bound (step 2).',
      cited_steps: '2',
    });
    expect(checked.next).toBe('04-escalate');
    expect(checked.reason).toBe('The analysis cites step 2 (revised by a backtrack)');
    const escalated = await run(
      '04-escalate',
      { history: HISTORY, ...checked.fields },
      { step: '07-check-citations', reason: checked.reason, decidedBy: 'code' },
    );
    expect(escalated.fields.escalation).toEqual({
      reason: 'the expert analysis was refused: The analysis cites step 2 (revised by a backtrack)',
      error: 'no error',
    });
    expect((escalated.fields.synthesis as { outcome: string }).outcome).toBe('escalated');
  });
});
