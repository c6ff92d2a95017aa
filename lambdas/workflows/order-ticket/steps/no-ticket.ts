import { causeMessage, DONE, defineCodeStep, NO_USAGE } from 'stepwise';

/** The fallback: end without a ticket id (the caller's workflow step then fails and hands over), saying why. */
export default defineCodeStep(async ({ input }) => {
  const failure = input.error
    ? `${input.error.Error}: ${causeMessage(input.error.Cause)}`
    : `route "${input.previous.next}" from ${input.previous.step} is not a declared edge`;
  return {
    next: DONE,
    reason: `No ticket opened: ${failure}`,
    decidedBy: 'code',
    fields: { failure },
    toolCalls: [],
    usage: NO_USAGE,
  };
});
