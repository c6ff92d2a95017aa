import { toolStep } from './tool-step.ts';

/** Step 06, the `order` branch: the order the email names, `found: false` without an order number. */
export default toolStep(
  'look_up_order',
  (input) => {
    const orderNumber = input.previous.data.orderNumber;
    return typeof orderNumber === 'string' && orderNumber ? { orderNumber } : undefined;
  },
  ({ found, status, items, deliveredAt }) => ({ found, status, items, deliveredAt }),
  { found: false },
);
