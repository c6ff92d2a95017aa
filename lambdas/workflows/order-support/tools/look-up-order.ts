import { defineTool, EmailInputSchema } from 'stepwise';
import * as z from 'zod';
import { orderSystem } from '../orders.ts';

/**
 * Look an order up by its number. Only an order of the verified sender is found: an order number
 * written in a mail never discloses another customer's order.
 */
export default defineTool({
  name: 'look_up_order',
  description: "Look up one of the customer's orders by its number (ORD-123456): status, delivery date, items.",
  input: z.strictObject({
    orderNumber: z
      .string()
      .trim()
      .regex(/^ORD-\d{6}$/i)
      .describe('The order number, ORD- and six digits.'),
  }),
  resources: { tables: { orders: 'read' } },
  connect: (env, aws) => orderSystem(env, () => aws.dynamo(), 'look_up_order'),
  async run({ orderNumber }, ctx, orders) {
    const { email } = EmailInputSchema.parse(ctx.input);
    const order = await orders.order(orderNumber.toUpperCase());
    if (!order || order.customerEmail !== email.from) return { found: false };
    const { customerEmail: _, ...visible } = order;
    return { found: true, ...visible };
  },
});
