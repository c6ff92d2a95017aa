import { defineCodeStep, NO_USAGE } from 'stepwise';
import { boundPlan, InvestigationInput, PlanProposal, planSteps, stepBudget } from '../rules.ts';
import { investigationType } from '../types.ts';

/**
 * `01-plan`: bound what `00-propose-plan` proposed (the planner) by the type's min and
 * max steps and the budget, recording every clip; countable work stays derived (one step per item).
 */
export default defineCodeStep(async ({ def, input }) => {
  const request = InvestigationInput.parse(input.input);
  const budget = stepBudget(def.manifest.maxSteps);
  const proposal = PlanProposal.safeParse(input.previous.data);
  const plan = boundPlan(
    planSteps(request, budget),
    proposal.success ? proposal.data : {},
    investigationType(def, request.type),
    budget,
  );
  const why =
    plan.plan_basis === 'derived'
      ? `one step per item (${plan.work_items.length})`
      : plan.plan_basis === 'proposed'
        ? 'the proposal, bounded'
        : `${plan.complexity} request (estimate)`;
  return {
    next: '02-investigate',
    reason: `${plan.total_steps} steps planned: ${why}${plan.clipped.length ? `; ${plan.clipped.join('; ')}` : ''}`,
    decidedBy: 'code',
    fields: { ...plan, tracked_total_steps: plan.total_steps, history: [], current_item: plan.work_items[0] ?? null },
    toolCalls: [],
    usage: NO_USAGE,
  };
});
