import { SESv2Client } from '@aws-sdk/client-sesv2';
import * as z from 'zod';
import { InvalidInputError } from '../../../core/errors.ts';
import { EmailInputSchema } from '../../../definitions/workflow/input.ts';
import { requireEnv } from '../../tools/toolbox.ts';
import { defineTool } from '../../tools/types.ts';
import { outboxMailer, replySubject, sesMailer } from './mail.ts';

// Strict: a model that tries to choose the recipient (`to`, `cc`, ...) is refused, not ignored.
export const SendEmailArgs = z.strictObject({
  subject: z
    .string()
    .trim()
    .min(1)
    .max(200)
    .optional()
    .describe("Used only when the customer's email had no subject; replies otherwise stay in the customer's thread."),
  body: z
    .string()
    .trim()
    .min(1)
    .max(20_000)
    .describe('The plain-text reply. It always goes to the customer who wrote in.'),
});

/**
 * `send_email`, the email trigger's reply tool, for any email workflow (a workflow offers it by
 * re-exporting it from its `tools/send-email.ts`). The recipient is the verified sender of the
 * inbound mail, whatever the caller wrote; one reply per execution (the fallback after a reply
 * step sends nothing more). Locally (`OUTBOX_FILE`) mail goes to an outbox file, on AWS through
 * SES from `MAIL_FROM`.
 */
export const sendEmail = defineTool({
  name: 'send_email',
  description:
    'Reply to the customer who sent the email being handled. The recipient is fixed; only the text is yours. One reply per email: once one was sent, a call sends nothing and returns the result of the first with replayed: true.',
  input: SendEmailArgs,
  idempotency: 'execution',
  personal: ['subject', 'body'],
  replyArg: 'body',
  resources: { sendEmail: true },
  connect: (env, aws) =>
    env.OUTBOX_FILE
      ? outboxMailer(env.OUTBOX_FILE)
      : sesMailer(
          aws.traced(new SESv2Client({ endpoint: env.AWS_ENDPOINT_URL_SESV2, region: aws.region })),
          requireEnv(env, 'MAIL_FROM', 'send_email'),
        ),
  async run(args, ctx, mailer) {
    const parsed = EmailInputSchema.safeParse(ctx.input);
    if (!parsed.success)
      throw new InvalidInputError(
        'send_email answers an inbound email: this execution was not started by the email trigger',
      );
    const { email } = parsed.data;
    const to = email.from;
    const { messageId } = await mailer.send({
      to,
      subject: replySubject(email.subject, args.subject),
      body: args.body,
      ...(email.messageId ? { inReplyTo: email.messageId } : {}),
      execution: ctx.execution.name,
      step: ctx.step,
    });
    return { sent: true, to, messageId };
  },
});
