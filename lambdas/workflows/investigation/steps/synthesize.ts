import { defineCodeStep, NO_USAGE } from 'stepwise';
import { type HistoryEntry, type Outcome, synthesize } from '../rules.ts';

/** `05-synthesize`: the conclusion from the history, with the outcome that ended the investigation. */
export default defineCodeStep(async ({ input }) => {
  const data = input.previous.data as { history?: HistoryEntry[]; outcome?: Outcome; tracked_total_steps?: number };
  const history = data.history ?? [];
  const synthesis = synthesize(history, data.outcome ?? 'complete', data.tracked_total_steps ?? history.length);
  return {
    next: '06-expert-analysis',
    reason: `Investigation ${synthesis.outcome} after ${synthesis.steps_taken} of ${synthesis.total_steps} steps`,
    decidedBy: 'code',
    fields: { synthesis },
    toolCalls: [],
    usage: NO_USAGE,
  };
});
