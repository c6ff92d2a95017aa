import { defineCodeStep, NO_USAGE } from 'stepwise';

const BUSY = 'Your previous message is still being processed. Please send this one again in a moment.';
const SORRY = 'Sorry, something went wrong on our side. A colleague will pick up this conversation and reply here.';

/**
 * 11 (the fallback): a turn rejected because another turn of the session is running gets the
 * busy reply and leaves the session alone; any other failure releases this turn's lease (the
 * session stays as the last completed turn left it) and hands over.
 */
export default defineCodeStep(async ({ input, toolbox, tool }) => {
  const outcome = input.previous.data.outcome;
  if (outcome === 'rejected-busy')
    return {
      next: 'DONE',
      reason: `Rejected: ${input.previous.reason}`,
      decidedBy: 'code',
      fields: { reply: BUSY, outcome: 'rejected-busy' },
      toolCalls: [],
      usage: NO_USAGE,
    };
  const call = await toolbox.execute(
    'session_store',
    { op: 'release', sessionId: String(input.input.sessionId) },
    tool,
  );
  const why = input.error ? `${input.error.Error}` : input.previous.reason;
  return {
    next: 'DONE',
    reason: `Handed over: ${why}`,
    decidedBy: 'code',
    fields: { reply: SORRY, outcome: 'handed-over' },
    toolCalls: [call],
    usage: NO_USAGE,
  };
});
