/** `send_email`: the mailer port, reply threading and the local outbox adapter (SES v2's: ses-mailer.ts). */
import { createHash } from 'node:crypto';
import { appendFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import * as z from 'zod';

/** A reply as the mailer sends it. `to` always comes from the verified ingress record. */
export interface OutgoingMail {
  to: string;
  subject: string;
  body: string;
  /** Message-ID of the mail being answered; omitted when it had none. */
  inReplyTo?: string;
  execution: string;
  step: string;
}

export interface Mailer {
  send(mail: OutgoingMail): Promise<{ messageId: string }>;
}

import { headerText, messageIdOf } from './headers.ts';

/**
 * The subject of a reply: `Re: <the customer's subject>` (mail clients thread on it together
 * with In-Reply-To); the proposed subject only when the customer's mail had none. Both come from
 * outside (the sender, the model), so the result is one line of inert text (`headerText`).
 */
export function replySubject(original: string, proposed: string | undefined): string {
  const base = headerText(original) || headerText(proposed ?? '') || 'Your message';
  return headerText(/^re:/i.test(base) ? base : `Re: ${base}`);
}

/**
 * The header fields of a reply that the inbound mail influences, made safe for any mailer: the
 * subject as one line of text, threading only with a valid message id.
 */
export function outgoingHeaders(mail: Pick<OutgoingMail, 'subject' | 'inReplyTo'>): {
  subject: string;
  inReplyTo?: string;
} {
  const inReplyTo = messageIdOf(mail.inReplyTo);
  return { subject: headerText(mail.subject) || 'Re: Your message', ...(inReplyTo ? { inReplyTo } : {}) };
}

export const OutboxEntrySchema = z.object({
  to: z.string(),
  subject: z.string(),
  body: z.string(),
  inReplyTo: z.string().optional(),
  execution: z.string(),
  step: z.string(),
  messageId: z.string(),
  sentAt: z.iso.datetime(),
});
export type OutboxEntry = z.infer<typeof OutboxEntrySchema>;

/**
 * Local adapter: nothing leaves the machine. Every mail is kept in `sent` and, when `file` is
 * given, appended to it as one JSON line (so the CLI and other processes can read the outbox).
 */
export function outboxMailer(file?: string, clock: () => Date = () => new Date()): Mailer & { sent: OutboxEntry[] } {
  const sent: OutboxEntry[] = [];
  return {
    sent,
    async send(mail: OutgoingMail) {
      const messageId = `<${createHash('sha256').update(`${mail.execution}\n${mail.step}`).digest('hex').slice(0, 24)}@outbox.local>`;
      const { inReplyTo: _raw, ...rest } = mail;
      const entry: OutboxEntry = { ...rest, ...outgoingHeaders(mail), messageId, sentAt: clock().toISOString() };
      sent.push(entry);
      if (file) {
        mkdirSync(dirname(file), { recursive: true });
        appendFileSync(file, JSON.stringify(entry) + '\n');
      }
      return { messageId };
    },
  };
}

/** The mails in an outbox file, oldest first (empty when nothing was sent yet). */
export function readOutbox(file: string): OutboxEntry[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => OutboxEntrySchema.parse(JSON.parse(line)));
}
