import { defineTool, EmailInputSchema, requireEnv } from 'stepwise';
import * as z from 'zod';
import { normalizeSerial } from '../registry.ts';
import { dynamoTicketStore, ticketIdFor } from '../tickets.ts';

/**
 * Open a repair ticket, once per (execution, step). The ticket id is derived from the execution
 * and step, the customer is the verified sender; step 03a binds the serial and product from the
 * warranty check, so a model cannot open a ticket for another device.
 */
export default defineTool({
  name: 'create_ticket',
  description:
    'Open a repair ticket for a device under warranty. Returns the ticketId. Calling it again in the same step returns the same ticket.',
  input: z.strictObject({
    serialNumber: z.string().trim().min(1).max(64).describe('Serial number of the device under warranty.'),
    product: z.string().trim().min(1).max(200).optional().describe('Product name from the warranty check.'),
    issueSummary: z.string().trim().min(1).max(2000).describe('The reported fault in one or two sentences.'),
    priority: z.enum(['low', 'normal', 'high']).optional().describe('Defaults to normal.'),
  }),
  idempotency: 'step',
  personal: ['serialNumber', 'issueSummary'],
  resources: { tables: { tickets: 'write' } },
  connect: (env, aws) => dynamoTicketStore(aws.dynamo(), requireEnv(env, 'TICKETS_TABLE', 'create_ticket')),
  async run(args, ctx, tickets) {
    const { email } = EmailInputSchema.parse(ctx.input);
    const ticket = await tickets.create({
      id: ticketIdFor(ctx.workflow, ctx.execution.name, ctx.step),
      serialNumber: normalizeSerial(args.serialNumber),
      ...(args.product ? { product: args.product } : {}),
      issueSummary: args.issueSummary,
      priority: args.priority ?? 'normal',
      customer: email.from,
      emailId: email.id,
      execution: ctx.execution.name,
      step: ctx.step,
      createdAt: ctx.now().toISOString(),
    });
    return { ticketId: ticket.id, status: 'open' };
  },
});
