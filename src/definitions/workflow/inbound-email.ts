import * as z from 'zod';

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
  })
  .strict();

/**
 * The verified record the ingress puts in the execution input as `$.email`. The body is not in it (256 KB state limit):
 * read it through the EmailStore.
 */
export type InboundEmail = z.infer<typeof InboundEmailSchema>;
