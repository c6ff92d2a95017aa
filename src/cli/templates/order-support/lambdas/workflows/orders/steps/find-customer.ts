import { defineCodeStep, EmailInputSchema, NO_USAGE } from 'stepwise';

/** The customer branch: the verified sender's tier (here by domain; look it up in your CRM instead). */
export default defineCodeStep(async ({ step, input }) => {
  const { email } = EmailInputSchema.parse(input.input);
  const tier = email.from.endsWith('@example.org') ? 'plus' : 'standard';
  return {
    next: step.next[0]!,
    reason: `Tier ${tier}`,
    decidedBy: 'code',
    fields: { tier },
    toolCalls: [],
    usage: NO_USAGE,
  };
});
