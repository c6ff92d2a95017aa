import { InvalidInputError } from '../../../core/errors.ts';
import { EmailInputSchema } from '../../../definitions/workflow/input.ts';
import type { EmailStore } from './store.ts';

/**
 * What steps of an email workflow see of the mail (the prompt's `untrusted` object): display
 * name, subject, receipt time and the body, read from the email store by the id in the input.
 * The sender's address is not in it: only `send_email` uses it, from the verified record.
 */
export async function emailUntrusted(
  input: Record<string, unknown>,
  emails: Pick<EmailStore, 'get'>,
): Promise<Record<string, unknown>> {
  const { email } = EmailInputSchema.parse(input);
  const stored = await emails.get(email.id);
  if (!stored) throw new InvalidInputError(`no stored body for email ${email.id}`);
  const { fromName, subject, receivedAt } = stored.email;
  return { email: { fromName, subject, receivedAt, body: stored.body } };
}
