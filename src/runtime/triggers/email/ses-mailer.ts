/** The mailer port's AWS adapter, in a module of its own: a local run (the outbox) never loads the SES client. */
import { type SESv2Client, SendEmailCommand } from '@aws-sdk/client-sesv2';
import { type Mailer, outgoingHeaders } from './mail.ts';

/** AWS adapter: SES v2 `SendEmail` from `from` (a verified identity). */
export function sesMailer(client: SESv2Client, from: string): Mailer {
  return {
    async send(mail) {
      const { subject, inReplyTo } = outgoingHeaders(mail);
      const threading = inReplyTo
        ? [
            { Name: 'In-Reply-To', Value: inReplyTo },
            { Name: 'References', Value: inReplyTo },
          ]
        : [];
      const out = await client.send(
        new SendEmailCommand({
          FromEmailAddress: from,
          Destination: { ToAddresses: [mail.to] },
          Content: {
            Simple: {
              Subject: { Data: subject, Charset: 'UTF-8' },
              Body: { Text: { Data: mail.body, Charset: 'UTF-8' } },
              // RFC 3834: an automatic reply says so, which stops well-behaved auto-responders answering it.
              Headers: [...threading, { Name: 'Auto-Submitted', Value: 'auto-replied' }],
            },
          },
        }),
      );
      return { messageId: out.MessageId ?? '' };
    },
  };
}
