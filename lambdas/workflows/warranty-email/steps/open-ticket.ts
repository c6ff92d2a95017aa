import { defineCodeStep, NO_USAGE } from '../../../steps/types.ts';

const NEXT = '05-send-confirmation';

/**
 * Step 03a, deterministic: open the repair ticket from validated state. The serial and product
 * come from the warranty check (`data.warranty`, never from the email), the summary and the
 * priority from step 01's outputs, so no model call is needed. A refused or failed call still routes to 05
 * without a ticket id (05 then sends the hand-off wording); outages throw (ASL Retry, then Catch).
 */
export default defineCodeStep(async ({ input, toolbox, tool }) => {
  const { issueSummary, safetyHazard, warranty } = input.previous.data as { issueSummary?: unknown; safetyHazard?: unknown; warranty?: { serialNumber?: unknown; product?: unknown } };
  const args = {
    serialNumber: warranty?.serialNumber,
    ...(typeof warranty?.product === 'string' && { product: warranty.product }),
    issueSummary: typeof issueSummary === 'string' && issueSummary.trim() ? issueSummary : 'Device fault reported by email (no summary).',
    priority: safetyHazard === true ? 'high' : 'normal',
  };
  const call = await toolbox.execute('create_ticket', args, tool);
  const ticketId = (call.result as { ticketId?: unknown } | undefined)?.ticketId;
  const opened = call.error === undefined && typeof ticketId === 'string';
  return {
    next: NEXT,
    reason: opened ? `Repair ticket created (${args.priority} priority)` : `Ticket not created: ${call.error ?? 'no ticket id in the result'}`,
    decidedBy: 'code',
    // `ticketId` is declared `from: create_ticket.ticketId`: the handler sets it from this call.
    fields: {},
    toolCalls: [call],
    usage: NO_USAGE,
  };
});
