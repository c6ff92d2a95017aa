import * as z from 'zod';

/** At most this many attachments are listed in the record (a mail may carry up to the MIME part budget). */
export const MAX_LISTED_ATTACHMENTS = 50;

/**
 * One attachment as the record lists it: what a step needs to decide about it, never its content (the state carries
 * no file). Its name is the sender's, so untrusted like the rest of the mail.
 */
export const InboundAttachmentSchema = z
  .object({
    name: z.string().max(200),
    contentType: z.string().max(200),
    bytes: z.number().int().nonnegative(),
  })
  .strict();

/**
 * The verified ingress record as it travels in the execution input (`$.input.email`). Steps
 * parse it with this schema: the state is data from outside the step, so it is checked like any
 * other input.
 */
export const InboundEmailSchema = z
  .object({
    id: z.string().min(1),
    /** `''` when the mail had no Message-ID header (the reply then carries no In-Reply-To). */
    messageId: z.string(),
    from: z.email(),
    fromName: z.string().optional(),
    to: z.array(z.string()),
    subject: z.string(),
    receivedAt: z.iso.datetime(),
    /** Characters of the full text body; the stored body may be cut to a shorter length (with a note). */
    bodyChars: z.number().int().nonnegative(),
    /** The mail's attachments in mail order (the first {@link MAX_LISTED_ATTACHMENTS}); absent when it has none. */
    attachments: z.array(InboundAttachmentSchema).max(MAX_LISTED_ATTACHMENTS).optional(),
  })
  .strict();

/**
 * The verified record the ingress puts in the execution input as `$.email`. The body is not in it (256 KB state limit):
 * read it through the EmailStore.
 */
export type InboundEmail = z.infer<typeof InboundEmailSchema>;

export type InboundAttachment = z.infer<typeof InboundAttachmentSchema>;
