import { defineTool, EmailInputSchema } from 'stepwise';
import * as z from 'zod';

type Orders = Record<string, { customer: string; status: string; lines: { sku: string; quantity: number }[] }>;

/** Sample orders: replace with your order system (a table, an API) in `connect`. */
const ORDERS: Orders = {
  'ORD-100234': {
    customer: 'anna.berg@example.org',
    status: 'delivered',
    lines: [
      { sku: 'MUG-4', quantity: 1 },
      { sku: 'PLATE-2', quantity: 2 },
    ],
  },
};

/** Look up one of the sender's orders: an order of another customer is not found. */
export default defineTool({
  name: 'look_up_order',
  description: "Look up one of the customer's orders by its number: status and lines.",
  input: z.strictObject({ orderNumber: z.string().regex(/^ORD-\d{6}$/) }),
  connect: (): Orders => ORDERS,
  // Eval cases without a mock for this tool read the sample orders too.
  evalPorts: (): Orders => ORDERS,
  async run({ orderNumber }, ctx, orders) {
    const { email } = EmailInputSchema.parse(ctx.input);
    const order = orders[orderNumber];
    if (!order || order.customer !== email.from) return { found: false, lines: [] };
    return { found: true, status: order.status, lines: order.lines };
  },
});
