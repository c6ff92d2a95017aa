import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { defineTool, statemachinesDir } from 'stepwise';
import * as z from 'zod';

const Order = z
  .object({
    order_id: z.string(),
    order_status: z.enum(['processing', 'shipped', 'delivered', 'cancelled']),
    order_total: z.number(),
    order_item: z.string(),
    delivered_days_ago: z.number().int().nullable(),
  })
  .strict();
const Orders = z.object({ orders: z.array(Order) }).strict();

/**
 * The example retailer's order lookup over its demo order file (`agent/orders.json` of the
 * workflow folder, bundled with the function; `ORDERS_FILE` points elsewhere). A real retailer
 * replaces `connect` with a client of its order system.
 */
export default defineTool({
  name: 'lookup_order',
  description: 'Look up an order by its order id: status, total, item, days since delivery.',
  input: z.strictObject({ order_id: z.string().regex(/^A-\d{4,8}$/, 'an order id like A-10234') }),
  connect: (env) => {
    const file = env.ORDERS_FILE ?? join(statemachinesDir(env), 'turn-pipeline', 'agent', 'orders.json');
    return Orders.parse(JSON.parse(readFileSync(file, 'utf8'))).orders;
  },
  async run({ order_id }, _ctx, orders) {
    const order = orders.find((o) => o.order_id === order_id);
    if (!order) throw new Error(`no order ${order_id}`);
    return order;
  },
});
