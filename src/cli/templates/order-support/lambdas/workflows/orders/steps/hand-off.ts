import { DONE, defineCodeStep, NO_USAGE } from 'stepwise';

/** The fallback: say why a person takes over (not an order, a caught error, no reply in time). */
export default defineCodeStep(async ({ input }) => {
  const why = input.error ? `${input.error.Error} in ${input.previous.next}` : input.previous.reason;
  return {
    next: DONE,
    reason: `Handed to a person: ${why}`,
    decidedBy: 'code',
    fields: { handoff: true },
    toolCalls: [],
    usage: NO_USAGE,
  };
});
