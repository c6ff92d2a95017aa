import { defineCodeStep, NO_USAGE } from 'stepwise';

/** Step 02: look the account up; an unknown account or a failed lookup goes to a person. */
export default defineCodeStep(async ({ input, toolbox, tool }) => {
  const call = await toolbox.execute('lookup_account', { customerId: input.input.customerId }, tool);
  const account = call.result as { found?: boolean } | undefined;
  if (call.error !== undefined || !account || account.found === false)
    return {
      next: '04-hand-off',
      reason: `No account: ${call.error ?? 'unknown customer id'}`,
      decidedBy: 'code',
      fields: {},
      toolCalls: [call],
      usage: NO_USAGE,
    };
  return {
    next: '03-answer',
    reason: 'Account found',
    decidedBy: 'code',
    fields: { account },
    toolCalls: [call],
    usage: NO_USAGE,
  };
});
