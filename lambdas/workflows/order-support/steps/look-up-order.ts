import type { StepInput } from 'stepwise';
import { toolStep } from './tool-step.ts';

/** The `look_up_order` arguments: the order number of the email (or of the reply), none without one. */
export const orderArgs = (input: StepInput) => {
  const orderNumber = input.previous.data.orderNumber;
  return typeof orderNumber === 'string' && orderNumber ? { orderNumber } : undefined;
};

/** What the workflow keeps of the order (`data.order`); a field the order lacks (deliveredAt in transit) is left out. */
export const orderFields = ({ found, status, items, deliveredAt, expectedDelivery }: Record<string, unknown>) =>
  Object.fromEntries(
    Object.entries({ found, status, items, deliveredAt, expectedDelivery }).filter(([, v]) => v !== undefined),
  );

/** Step 06, the `order` branch: the order the email names, `found: false` without an order number. */
export default toolStep('look_up_order', orderArgs, orderFields, { found: false });
