import { defineCodeStep, NO_USAGE, StepFailedError } from 'stepwise';

/** The order branch: the order the email names; `found: false` without an order number. A failed lookup fails the branch. */
export default defineCodeStep(async ({ step, input, toolbox, tool }) => {
  const orderNumber = input.previous.data.orderNumber;
  const done = (fields: Record<string, unknown>, toolCalls: Awaited<ReturnType<typeof toolbox.execute>>[]) => ({
    next: step.next[0]!,
    reason: fields.found ? 'Order found' : 'Order not found',
    decidedBy: 'code' as const,
    fields,
    toolCalls,
    usage: NO_USAGE,
  });
  if (typeof orderNumber !== 'string') return done({ found: false, lines: [] }, []);
  const call = await toolbox.execute('look_up_order', { orderNumber }, tool);
  if (call.error !== undefined) throw new StepFailedError(`look_up_order failed: ${call.error}`);
  return done(call.result as Record<string, unknown>, [call]);
});
