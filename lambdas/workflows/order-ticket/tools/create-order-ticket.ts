import { defineTool, EmailInputSchema, requireEnv } from 'stepwise';
import * as z from 'zod';
import { dynamoTicketStore, memoryTicketStore, ticketIdFor } from '../tickets.ts';

/**
 * Open an order ticket, once per (execution, step). The id is derived from the execution and the
 * customer is the verified sender of the caller's email, never an argument.
 */
export default defineTool({
  name: 'create_order_ticket',
  description:
    'Open an order-support ticket. Returns the ticketId; calling it again in the same step returns the same ticket.',
  input: z.strictObject({
    orderNumber: z
      .string()
      .regex(/^ORD-\d{6}$/)
      .describe('The order number.'),
    summary: z.string().trim().min(1).max(2000).describe('The problem in one or two sentences.'),
    priority: z.enum(['normal', 'high']).describe('high when a photo of the damage came with the email.'),
    unreadable: z.array(z.string()).max(20).default([]).describe('Attachments that could not be read.'),
  }),
  idempotency: 'step',
  personal: ['summary'],
  resources: { tables: { 'order-tickets': 'write' } },
  connect: (env, aws) => dynamoTicketStore(aws.dynamo(), requireEnv(env, 'ORDER_TICKETS_TABLE', 'create_order_ticket')),
  evalPorts: memoryTicketStore,
  async run(args, ctx, tickets) {
    const { email } = EmailInputSchema.parse(ctx.input);
    const id = ticketIdFor(ctx.workflow, ctx.execution.name, ctx.step);
    await tickets.create({
      id,
      ...args,
      customer: email.from,
      thread: email.messageId,
      execution: ctx.execution.name,
      createdAt: ctx.now().toISOString(),
    });
    return { ticketId: id, priority: args.priority };
  },
});
