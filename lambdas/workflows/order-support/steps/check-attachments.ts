import { defineCodeStep, EmailInputSchema, NO_USAGE } from 'stepwise';

/**
 * Step 02: the attachments are in the verified email record (`input.email.attachments`, absent
 * when the mail has none). With some, step 03 classifies them; without, the map is skipped (its
 * items must exist) and the classifications are an empty list, as step 14 hands them to the ticket.
 */
export default defineCodeStep(async ({ step, input }) => {
  const { attachments = [] } = EmailInputSchema.parse(input.input).email;
  const routed = { decidedBy: 'code' as const, toolCalls: [], usage: NO_USAGE };
  if (attachments.length > 0)
    return {
      ...routed,
      next: step.next[0]!,
      reason: `${attachments.length} attachment${attachments.length === 1 ? '' : 's'} to classify`,
      fields: {},
    };
  return { ...routed, next: step.next[1]!, reason: 'No attachments to classify', fields: { classifications: [] } };
});
