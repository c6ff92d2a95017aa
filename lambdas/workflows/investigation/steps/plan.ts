import { NO_USAGE, defineCodeStep } from 'stepwise';
import { InvestigationInput, planSteps, stepBudget } from '../rules.ts';

/** `01-plan`: derive `total_steps` from countable work, else estimate it from the request's complexity. */
export default defineCodeStep(async ({ def, input }) => {
  const plan = planSteps(InvestigationInput.parse(input.input), stepBudget(def.manifest.maxSteps));
  const why = plan.plan_basis === 'derived' ? `one step per item (${plan.work_items.length})` : `${plan.complexity} request`;
  return {
    next: '02-investigate',
    reason: `${plan.total_steps} steps planned: ${why}`,
    decidedBy: 'code',
    fields: { ...plan, tracked_total_steps: plan.total_steps, history: [], current_item: plan.work_items[0] ?? null },
    toolCalls: [],
    usage: NO_USAGE,
  };
});
