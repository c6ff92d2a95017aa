/** `look_up_order` and `look_up_customer`: the order system and the customer system, read only. */
import { readFileSync } from 'node:fs';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { requireEnv } from 'stepwise';
import * as z from 'zod';

export const OrderSchema = z.object({
  orderNumber: z.string(),
  customerEmail: z.email(),
  status: z.enum(['placed', 'shipped', 'delivered']),
  deliveredAt: z.iso.date().optional(),
  /** While in transit: when the carrier expects to deliver it, an ISO 8601 timestamp (step 16 waits until then). */
  expectedDelivery: z.iso.datetime().optional(),
  items: z.array(z.object({ sku: z.string(), name: z.string(), quantity: z.number().int().positive() })),
});
export type Order = z.infer<typeof OrderSchema>;

export const CustomerSchema = z.object({
  email: z.email(),
  customerId: z.string(),
  tier: z.enum(['standard', 'plus']),
});
export type Customer = z.infer<typeof CustomerSchema>;

export interface OrderSystem {
  order(orderNumber: string): Promise<Order | undefined>;
  customer(email: string): Promise<Customer | undefined>;
}

/** Local adapter: a file `{ orders: [...], customers: [...] }`, read once on first use. */
export function jsonFileOrders(file: string): OrderSystem {
  let data: { orders: Order[]; customers: Customer[] } | undefined;
  const load = () =>
    (data ??= z
      .object({ orders: z.array(OrderSchema), customers: z.array(CustomerSchema) })
      .parse(JSON.parse(readFileSync(file, 'utf8'))));
  return {
    order: async (orderNumber) => load().orders.find((o) => o.orderNumber === orderNumber),
    customer: async (email) => load().customers.find((c) => c.email === email.toLowerCase()),
  };
}

/** AWS adapter: one table of the shop's data, `pk = ORDER#<number>` or `CUSTOMER#<email>`, `sk = PROFILE`. */
export function dynamoOrders(client: DynamoDBClient, tableName: string): OrderSystem {
  const doc = DynamoDBDocumentClient.from(client);
  const get = async (pk: string) =>
    (await doc.send(new GetCommand({ TableName: tableName, Key: { pk, sk: 'PROFILE' } }))).Item;
  return {
    async order(orderNumber) {
      const item = await get(`ORDER#${orderNumber}`);
      return item && OrderSchema.parse(item);
    },
    async customer(email) {
      const item = await get(`CUSTOMER#${email.toLowerCase()}`);
      return item && CustomerSchema.parse(item);
    },
  };
}

/** The adapter a tool's `connect` builds: the local file when `ORDERS_FILE` is set, else OrdersTable. */
export const orderSystem = (env: Record<string, string | undefined>, client: () => DynamoDBClient, tool: string) =>
  env.ORDERS_FILE ? jsonFileOrders(env.ORDERS_FILE) : dynamoOrders(client(), requireEnv(env, 'ORDERS_TABLE', tool));
