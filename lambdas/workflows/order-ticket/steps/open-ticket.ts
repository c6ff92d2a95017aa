import { defineCodeStep, NO_USAGE, StepFailedError } from 'stepwise';

interface Classification {
  index: number;
  ok: boolean;
  fields?: { name?: string; label?: string };
  error?: unknown;
}

/** Step 01: open the ticket; a photo of the damage makes it high priority, unreadable attachments are listed. */
export default defineCodeStep(async ({ step, input, toolbox, tool }) => {
  const {
    orderNumber,
    summary,
    attachments = [],
  } = input.input as {
    orderNumber: string;
    summary: string;
    attachments?: Classification[];
  };
  const priority = attachments.some((a) => a.ok && a.fields?.label === 'damage-photo') ? 'high' : 'normal';
  const unreadable = attachments.filter((a) => !a.ok).map((a) => `attachment ${a.index + 1}`);
  const call = await toolbox.execute('create_order_ticket', { orderNumber, summary, priority, unreadable }, tool);
  if (call.error !== undefined) throw new StepFailedError(`create_order_ticket failed: ${call.error}`);
  const { ticketId } = call.result as { ticketId: string };
  return {
    next: step.next[0]!,
    reason: `Ticket ${ticketId} opened (${priority} priority)`,
    decidedBy: 'code',
    fields: { ticketId, priority },
    toolCalls: [call],
    usage: NO_USAGE,
  };
});
