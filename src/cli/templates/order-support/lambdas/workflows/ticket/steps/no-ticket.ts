import { DONE, defineCodeStep, NO_USAGE } from 'stepwise';

/** The fallback: end without a ticket id, saying why. */
export default defineCodeStep(async ({ input }) => ({
  next: DONE,
  reason: `No ticket opened: ${input.error ? input.error.Error : input.previous.reason}`,
  decidedBy: 'code',
  fields: {},
  toolCalls: [],
  usage: NO_USAGE,
}));
