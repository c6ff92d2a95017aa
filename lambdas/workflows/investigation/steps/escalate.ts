import { DONE, defineCodeStep, NO_USAGE } from 'stepwise';
import { type HistoryEntry, synthesize } from '../rules.ts';

/**
 * `04-escalate`: the checkpoint timed out, the citation check refused the expert analysis, or a
 * step failed (as the fallback): hand the investigation so far to a person, with the reason.
 * Deterministic, so it works when the model is down.
 */
export default defineCodeStep(async ({ input }) => {
  const data = input.previous.data as { history?: HistoryEntry[]; tracked_total_steps?: number };
  const history = data.history ?? [];
  const error = input.error?.Error ?? 'no error';
  const timedOut = error === 'States.Timeout' || error === 'States.HeartbeatTimeout';
  const refused = input.error === null && input.previous.step === '07-check-citations';
  const why = timedOut
    ? 'the checkpoint was not resumed in time'
    : refused
      ? `the expert analysis was refused: ${input.previous.reason}`
      : `a step failed (${error})`;
  return {
    next: DONE,
    reason: `Escalated: ${why}`,
    decidedBy: 'code',
    fields: {
      synthesis: synthesize(history, 'escalated', data.tracked_total_steps ?? history.length),
      escalation: { reason: why, error },
    },
    toolCalls: [],
    usage: NO_USAGE,
  };
});
