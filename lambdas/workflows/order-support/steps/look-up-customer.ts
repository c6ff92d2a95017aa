import { toolStep } from './tool-step.ts';

/** Step 07, the `customer` branch: the verified sender in the customer system. */
export default toolStep(
  'look_up_customer',
  () => ({}),
  ({ found, customerId, tier }) => ({ found, customerId, tier }),
);
