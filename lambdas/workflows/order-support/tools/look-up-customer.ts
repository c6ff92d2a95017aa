import { defineTool, EmailInputSchema } from 'stepwise';
import * as z from 'zod';
import { orderSystem } from '../orders.ts';

/** Look the verified sender up in the customer system (no argument: the caller cannot name another customer). */
export default defineTool({
  name: 'look_up_customer',
  description: 'Look up the customer who sent the email: customer id and service tier.',
  input: z.strictObject({}),
  resources: { tables: { orders: 'read' } },
  connect: (env, aws) => orderSystem(env, () => aws.dynamo(), 'look_up_customer'),
  async run(_args, ctx, orders) {
    const { email } = EmailInputSchema.parse(ctx.input);
    const customer = await orders.customer(email.from);
    return customer ? { found: true, customerId: customer.customerId, tier: customer.tier } : { found: false };
  },
});
