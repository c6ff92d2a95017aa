import { defineCodeStep, NO_USAGE, StepFailedError } from 'stepwise';
import * as z from 'zod';

/** One attachment as the email record lists it (`input.email.attachments`): never its content. */
const AttachmentSchema = z.strictObject({
  name: z.string(),
  contentType: z.string(),
  bytes: z.number().int().nonnegative(),
});

/** Types we never open: executables, scripts and archives (they could hide anything). */
const REFUSED =
  /^application\/(x-msdownload|x-sh|x-executable|zip|x-zip-compressed|x-7z-compressed|x-rar-compressed|java-archive)$/i;
const INVOICE_NAME = /invoice|receipt|rechnung|facture|bill/i;

/**
 * Step 04, once per attachment of step 03: an invoice (a PDF named like one), a photo of the damage
 * (an image) or other. An empty or refused file fails its item: step 03 reports it and tolerates one.
 */
export default defineCodeStep(async ({ step, input }) => {
  const attachment = AttachmentSchema.parse(input.previous.data.attachment);
  if (attachment.bytes === 0) throw new StepFailedError(`${attachment.name} is empty`);
  if (REFUSED.test(attachment.contentType))
    throw new StepFailedError(`${attachment.name}: ${attachment.contentType} files are not opened`);
  const label = attachment.contentType.startsWith('image/')
    ? 'damage-photo'
    : attachment.contentType === 'application/pdf' && INVOICE_NAME.test(attachment.name)
      ? 'invoice'
      : 'other';
  return {
    next: step.next[0]!,
    reason: `${attachment.name} (${attachment.contentType}) is ${label}`,
    decidedBy: 'code',
    fields: { name: attachment.name, label },
    toolCalls: [],
    usage: NO_USAGE,
  };
});
