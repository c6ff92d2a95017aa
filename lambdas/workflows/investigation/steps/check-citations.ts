import { DONE, defineCodeStep, NO_USAGE } from 'stepwise';
import { citedSteps, type HistoryEntry, invalidCitations } from '../rules.ts';

/**
 * `07-check-citations`: the expert analysis is the model's prose, so code checks what it rests on.
 * Every step it cites (in its text or in `cited_steps`) must be recorded in the history and not
 * revised by a later backtrack; an analysis that cites any other goes to a person (`04-escalate`)
 * instead of out as the conclusion.
 */
export default defineCodeStep(async ({ input }) => {
  const data = input.previous.data as { history?: HistoryEntry[]; analysis?: unknown; cited_steps?: unknown };
  const text = (value: unknown) => (typeof value === 'string' ? value : value === undefined ? '' : String(value));
  const cited = citedSteps(text(data.analysis), text(data.cited_steps));
  const invalid = invalidCitations(data.history ?? [], cited);
  const citations = { cited, invalid };
  if (invalid.length === 0)
    return {
      next: DONE,
      reason: cited.length
        ? `The analysis cites steps ${cited.join(', ')}, all recorded and current`
        : 'The analysis cites no step',
      decidedBy: 'code',
      fields: { citations },
      toolCalls: [],
      usage: NO_USAGE,
    };
  return {
    next: '04-escalate',
    reason: `The analysis cites ${invalid.map((c) => `step ${c.step} (${c.why})`).join(', ')}`,
    decidedBy: 'code',
    fields: { citations },
    toolCalls: [],
    usage: NO_USAGE,
  };
});
