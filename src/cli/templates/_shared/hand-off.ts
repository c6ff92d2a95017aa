import { DONE, defineCodeStep, NO_USAGE } from 'stepwise';

/**
 * The fallback: say why a person takes over (a caught error, an undeclared route, or what the previous step reported).
 */
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
