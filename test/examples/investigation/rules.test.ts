/**
 * The investigation's rules, pure: planned and derived step counts, total_steps raised, early exit at certain,
 * backtracking that keeps the history, the budget.
 */
import { describe, expect, it } from 'vitest';
import {
  boundPlan,
  type HistoryEntry,
  pausesBetweenSteps,
  planSteps,
  type RecordContext,
  recordStep,
  type StepReport,
  stepBudget,
  synthesize,
} from '../../../lambdas/workflows/investigation/rules.ts';

const file = (path: string, lines: number) => ({
  path,
  content: Array.from({ length: lines }, (_, i) => `line ${i}`).join('\n'),
});
const report = (over: Partial<StepReport> = {}): StepReport => ({
  step_number: 1,
  total_steps: 3,
  next_step_required: true,
  confidence: 'low',
  findings: 'something',
  ...over,
});
const estimated = { plan_basis: 'estimated' as const, work_items: [] };
const ctx = (over: Partial<RecordContext> = {}): RecordContext => ({
  history: [],
  total_steps: 3,
  plan: estimated,
  budget: 6,
  ...over,
});

/** Run reports through recordStep as the record step does, one after the other. */
function investigate(reports: StepReport[], start: Partial<RecordContext> = {}) {
  let state = ctx(start);
  const recorded = [];
  for (const r of reports) {
    const out = recordStep(r, state);
    recorded.push(out);
    state = { ...state, history: out.history, total_steps: out.total_steps };
  }
  return recorded;
}

describe('planning total_steps', () => {
  it('derives one step per model to consult, and discovery plus one per file to document', () => {
    expect(planSteps({ request: 'r', material: [], consult: ['a', 'b', 'c'], checkpoints: false }, 6)).toMatchObject({
      total_steps: 3,
      plan_basis: 'derived',
      work_items: ['a', 'b', 'c'],
    });
    expect(planSteps({ request: 'r', material: [], document: ['x.ts', 'y.ts'], checkpoints: false }, 6)).toMatchObject({
      total_steps: 3,
      plan_basis: 'derived',
      work_items: ['discovery', 'x.ts', 'y.ts'],
    });
  });

  it('estimates from the material when nothing is countable, and the budget caps every plan', () => {
    expect(planSteps({ request: 'r', material: [file('a', 10)], checkpoints: false }, 6)).toMatchObject({
      total_steps: 2,
      complexity: 'simple',
      plan_basis: 'estimated',
    });
    expect(planSteps({ request: 'r', material: [file('a', 50), file('b', 50)], checkpoints: false }, 6)).toMatchObject({
      total_steps: 3,
      complexity: 'moderate',
    });
    expect(planSteps({ request: 'r', material: [file('a', 500)], checkpoints: false }, 6)).toMatchObject({
      total_steps: 5,
      complexity: 'complex',
    });
    expect(planSteps({ request: 'r', material: [file('a', 500)], checkpoints: false }, 4).total_steps).toBe(4);
    expect(
      planSteps({ request: 'r', material: [], consult: ['a', 'b', 'c', 'd', 'e'], checkpoints: false }, 4).total_steps,
    ).toBe(4);
  });

  it('leaves room in maxSteps for the proposal and the plan, an investigate + record pair per step, the synthesis, the analysis, its check and an escalation', () => {
    expect(stepBudget(18)).toBe(6);
    // 2 + 2 * 6 + 4 = 18 states run, a failed citation check escalating at count 18.
    expect(2 + 2 * stepBudget(18) + 4).toBeLessThanOrEqual(18);
    expect(stepBudget(3)).toBe(1);
  });
});

describe('recording a step', () => {
  it('raises total_steps when step_number exceeds it, and notes it', () => {
    const [, , third] = investigate([
      report({ step_number: 1, total_steps: 2 }),
      report({ step_number: 2, total_steps: 2, next_step_required: true }),
      report({ step_number: 3, total_steps: 2, next_step_required: false, confidence: 'high' }),
    ]);
    expect(third!.entry.total_steps).toBe(3);
    expect(third!.total_steps).toBe(3);
    expect(third!.entry.adjustments).toContain('total_steps raised from 2 to 3');
    expect(third!.outcome).toBe('complete');
  });

  it('counts the next step in when the investigation goes on past the estimate', () => {
    const [first] = investigate([report({ step_number: 1, total_steps: 1, next_step_required: true })]);
    expect(first!.continue).toBe(true);
    expect(first!.total_steps).toBe(2);
  });

  it('ends early at certain, even with steps left and next_step_required', () => {
    const [first] = investigate([
      report({ step_number: 1, total_steps: 5, confidence: 'certain', next_step_required: true }),
    ]);
    expect(first).toMatchObject({ continue: false, outcome: 'certain', total_steps: 5, required_actions: [] });
  });

  it('records the step number itself: a report that says otherwise is corrected and noted', () => {
    const [, second] = investigate([report(), report({ step_number: 7 })]);
    expect(second!.entry.step_number).toBe(2);
    expect(second!.entry.adjustments).toContain('step_number 7 reported, 2 recorded');
  });

  it('keeps a derived count and runs every item, whatever the model estimates or says', () => {
    const plan = { plan_basis: 'derived' as const, work_items: ['a', 'b', 'c'] };
    const steps = investigate(
      [
        report({ total_steps: 1, next_step_required: false }),
        report({ step_number: 2, total_steps: 9, next_step_required: false }),
        report({ step_number: 3, next_step_required: false }),
      ],
      { plan, total_steps: 3 },
    );
    expect(steps.map((s) => s.total_steps)).toEqual([3, 3, 3]);
    expect(steps.map((s) => s.continue)).toEqual([true, true, false]);
    expect(steps.map((s) => s.entry.item)).toEqual(['a', 'b', 'c']);
    expect(steps[0]!.required_actions[0]).toBe('Step 2 of 3: work on b');
    expect(steps[2]!.outcome).toBe('complete');
  });

  it('ends in budget_exhausted when the budget is spent and the investigation would go on', () => {
    const steps = investigate([report(), report({ step_number: 2 })], { budget: 2 });
    expect(steps.map((s) => s.outcome)).toEqual([undefined, 'budget_exhausted']);
  });

  it('keeps the history on a backtrack: earlier entries unchanged, the revision marked, the conclusion without them', () => {
    const steps = investigate([
      report({ findings: 'heap grows' }),
      report({ step_number: 2, findings: 'cache unbounded', confidence: 'medium' }),
      report({ step_number: 3, findings: 'cache bounded; listeners leak', confidence: 'high', backtrack_from_step: 2 }),
      report({ step_number: 4, findings: 'confirmed', confidence: 'certain' }),
    ]);
    const before: HistoryEntry[] = structuredClone(steps[1]!.history);
    const history = steps[3]!.history;
    expect(history).toHaveLength(4);
    expect(history.slice(0, 2)).toEqual(before);
    expect(history[2]!.revises).toEqual([2]);
    const synthesis = synthesize(history, steps[3]!.outcome!, steps[3]!.total_steps);
    expect(synthesis.revised_steps).toEqual([2]);
    expect(synthesis.findings).toEqual([
      'Step 1: heap grows',
      'Step 3: cache bounded; listeners leak',
      'Step 4: confirmed',
    ]);
    expect(synthesis).toMatchObject({ outcome: 'certain', confidence: 'certain', steps_taken: 4 });
  });

  it('ignores a backtrack to the current or a later step', () => {
    const [first] = investigate([report({ backtrack_from_step: 1 })]);
    expect(first!.entry.revises).toBeUndefined();
    expect(first!.entry.adjustments).toContain('backtrack_from_step 1 ignored: not an earlier step');
  });

  it('asks for broad discovery while exploring and for verification as confidence grows', () => {
    const [low] = investigate([report({ confidence: 'exploring' })]);
    const [medium] = investigate([report({ confidence: 'medium' })]);
    expect(low!.required_actions.join(' ')).toMatch(/first hypothesis/);
    expect(medium!.required_actions.join(' ')).toMatch(/verify the hypothesis/);
  });
});

describe('bounding the planner (00-propose-plan → 01-plan) and pauses per type', () => {
  const estimate = planSteps({ material: [] }, 6);
  const incident = { min_steps: 1, max_steps: 6, pauses: 'on_request' as const };
  it("clips a proposal over the budget or the type's max, raises one under its min, and records each clip", () => {
    expect(boundPlan(estimate, { proposed_total_steps: 12 }, incident, 6)).toMatchObject({
      total_steps: 6,
      plan_basis: 'proposed',
      clipped: ['proposed 12 steps, clipped to 6 (the step budget)'],
      proposed_total_steps: 12,
    });
    expect(boundPlan(estimate, { proposed_total_steps: 5 }, { ...incident, max_steps: 4 }, 6).clipped).toEqual([
      "proposed 5 steps, clipped to 4 (the type's max_steps)",
    ]);
    expect(boundPlan(estimate, { proposed_total_steps: 1 }, { ...incident, min_steps: 3 }, 6)).toMatchObject({
      total_steps: 3,
      clipped: ["proposed 1 steps, raised to the type's min_steps 3"],
    });
    expect(boundPlan(estimate, { proposed_total_steps: 3 }, incident, 6)).toMatchObject({
      total_steps: 3,
      clipped: [],
    });
  });

  it('falls back to the estimate without a usable proposal, and keeps countable work derived', () => {
    expect(boundPlan(estimate, {}, incident, 6)).toMatchObject({
      total_steps: estimate.total_steps,
      plan_basis: 'estimated',
      clipped: [`no usable proposal: the estimate (${estimate.total_steps}) is planned`],
    });
    const derived = planSteps({ material: [], consult: ['a', 'b'] }, 6);
    expect(boundPlan(derived, { proposed_total_steps: 9 }, incident, 6)).toMatchObject({
      total_steps: 2,
      plan_basis: 'derived',
      clipped: [],
    });
  });

  it('pauses always, never, or on request, by investigation type', () => {
    expect(pausesBetweenSteps({ ...incident, pauses: 'always' }, false)).toBe(true);
    expect(pausesBetweenSteps({ ...incident, pauses: 'never' }, true)).toBe(false);
    expect([pausesBetweenSteps(incident, true), pausesBetweenSteps(incident, false)]).toEqual([true, false]);
  });
});
