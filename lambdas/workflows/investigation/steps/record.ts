import { CHECKPOINT_DATA_KEY, defineCodeStep, NO_USAGE, StepFailedError } from 'stepwise';
import {
  type HistoryEntry,
  InvestigationInput,
  type Plan,
  pausesBetweenSteps,
  recordStep,
  StepReport,
  stepBudget,
} from '../rules.ts';
import { investigationType } from '../types.ts';

/**
 * `03-record`: append the step's report to the history and decide: another step (through the
 * checkpoint when the input asks for one), or the synthesis (certain, complete, budget spent).
 */
export default defineCodeStep(async ({ def, input }) => {
  const data = input.previous.data as {
    history?: HistoryEntry[];
    tracked_total_steps?: number;
    plan_basis?: Plan['plan_basis'];
    work_items?: string[];
  } & Record<string, unknown>;
  const report = StepReport.safeParse(input.previous.fields);
  if (!report.success) {
    const issue = report.error.issues[0]!;
    throw new StepFailedError(`the step report is incomplete: ${issue.path.join('.') || 'report'}: ${issue.message}`);
  }
  const history = data.history ?? [];
  // The resumer's output stays in data; it belongs to the step that ran after it only.
  const checkpoint = data[CHECKPOINT_DATA_KEY];
  const seen = history.some((e) => JSON.stringify(e.checkpoint) === JSON.stringify(checkpoint));
  const recorded = recordStep(report.data, {
    history,
    total_steps: data.tracked_total_steps ?? report.data.total_steps,
    plan: { plan_basis: data.plan_basis ?? 'estimated', work_items: data.work_items ?? [] },
    budget: stepBudget(def.manifest.maxSteps),
    ...(checkpoint !== undefined && !seen && { checkpoint }),
  });
  const { entry } = recorded;
  const status = `step ${entry.step_number}/${recorded.total_steps} (${entry.confidence})`;
  const request = InvestigationInput.parse(input.input);
  const checkpoints = pausesBetweenSteps(investigationType(def, request.type), request.checkpoints);
  return {
    next: recorded.continue ? '02-investigate' : '05-synthesize',
    reason: recorded.continue ? `${status}: another step needed` : `${status}: ${recorded.outcome}`,
    decidedBy: 'code',
    fields: {
      history: recorded.history,
      total_steps: recorded.total_steps,
      // The investigate step's own total_steps also lands in data: this one is the investigation's.
      tracked_total_steps: recorded.total_steps,
      step_number: entry.step_number,
      confidence: entry.confidence,
      next_step_required: recorded.continue,
      required_actions: recorded.required_actions,
      checkpoint_required: recorded.continue && checkpoints,
      current_item: data.work_items?.[entry.step_number] ?? null,
      ...(recorded.outcome && { outcome: recorded.outcome }),
    },
    toolCalls: [],
    usage: NO_USAGE,
  };
});
