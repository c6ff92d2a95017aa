import { orderArgs, orderFields } from './look-up-order.ts';
import { toolStep } from './tool-step.ts';

/**
 * Step 17, after step 16 waited until the expected delivery: the same look-up as step 06, its
 * result replacing `data.order`. Delivered → the first edge (the delivery is confirmed), still not
 * delivered (or no longer found) → the second (a ticket is opened).
 */
export default toolStep(
  'look_up_order',
  orderArgs,
  (result) => ({ order: orderFields(result) }),
  { order: { found: false } },
  ({ order }, next) => {
    const { status, deliveredAt } = order as { status?: string; deliveredAt?: string };
    return status === 'delivered'
      ? { next: next[0]!, reason: `The order was delivered${deliveredAt ? ` on ${deliveredAt}` : ''}` }
      : { next: next[1]!, reason: `The order is still not delivered (status: ${status ?? 'not found'})` };
  },
);
