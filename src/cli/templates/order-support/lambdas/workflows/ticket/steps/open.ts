import { createHash } from 'node:crypto';
import { defineCodeStep, NO_USAGE } from 'stepwise';

/** Open the ticket: here an id derived from the execution; call your ticket system instead. */
export default defineCodeStep(async ({ step, input }) => {
  const ticketId = `TKT-${createHash('sha256').update(input.execution.name).digest('hex').slice(0, 10).toUpperCase()}`;
  return {
    next: step.next[0]!,
    reason: `Ticket ${ticketId} opened for ${String(input.input.orderNumber)}`,
    decidedBy: 'code',
    fields: { ticketId },
    toolCalls: [],
    usage: NO_USAGE,
  };
});
