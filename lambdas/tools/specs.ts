import { z } from 'zod';
import type { ToolSpec } from './types.ts';

export const CheckWarrantyArgs = z.strictObject({
  serialNumber: z.string().trim().min(1).max(64).describe('The device serial number, e.g. SN12345.'),
});

export const CreateTicketArgs = z.strictObject({
  serialNumber: z.string().trim().min(1).max(64).describe('Serial number of the device under warranty.'),
  product: z.string().trim().min(1).max(200).optional().describe('Product name from the warranty check.'),
  issueSummary: z.string().trim().min(1).max(2000).describe('The reported fault in one or two sentences.'),
  priority: z.enum(['low', 'normal', 'high']).optional().describe('Defaults to normal.'),
});

// Strict: a model that tries to choose the recipient (`to`, `cc`, ...) is refused, not ignored.
export const SendEmailArgs = z.strictObject({
  subject: z
    .string()
    .trim()
    .min(1)
    .max(200)
    .optional()
    .describe("Used only when the customer's email had no subject; replies otherwise stay in the customer's thread."),
  body: z.string().trim().min(1).max(20_000).describe('The plain-text reply. It always goes to the customer who wrote in.'),
});

/**
 * The warranty agent's tools. `loggableArgs` lists the arguments the event log may keep; the
 * others are personal data: the serial number (step 01 marks it `pii`: it identifies the
 * customer's device), fault descriptions and mail text.
 */
export const TOOL_SPECS = {
  check_warranty: {
    name: 'check_warranty',
    description: 'Look a serial number up in the warranty registry. Returns status valid, expired or not_found, with product and warrantyEnd when registered.',
    input: CheckWarrantyArgs,
    loggableArgs: [],
  },
  create_ticket: {
    name: 'create_ticket',
    description: 'Open a repair ticket for a device under warranty. Returns the ticketId. Calling it again in the same step returns the same ticket.',
    input: CreateTicketArgs,
    idempotency: 'step',
    loggableArgs: ['product', 'priority'],
  },
  send_email: {
    name: 'send_email',
    description:
      'Reply to the customer who sent the email being handled. The recipient is fixed; only the text is yours. One reply per email: once one was sent, a call sends nothing and returns the result of the first with replayed: true.',
    input: SendEmailArgs,
    // One reply per inbound email: the fallback after a reply step must not send a second one.
    idempotency: 'execution',
    loggableArgs: [],
  },
} as const satisfies Record<string, ToolSpec>;

export type ToolName = keyof typeof TOOL_SPECS;
export type ToolArgs<T extends ToolName> = z.infer<(typeof TOOL_SPECS)[T]['input']>;

export function toolSpec(name: string): ToolSpec | undefined {
  return Object.hasOwn(TOOL_SPECS, name) ? TOOL_SPECS[name as ToolName] : undefined;
}
