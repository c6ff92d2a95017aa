import * as z from 'zod';
import type { Env } from '../../../core/env.ts';
import { InvalidInputError } from '../../../core/errors.ts';
import { lazy } from '../../../core/lazy.ts';
import { EmailInputSchema } from '../../../definitions/workflow/input.ts';
import { requireEnv } from '../../tools/toolbox.ts';
import { type AwsClients, defineTool, type ToolContext } from '../../tools/types.ts';
import { type Mailer, outboxMailer, replySubject } from './mail.ts';

/**
 * Locally (`OUTBOX_FILE`) mail goes to an outbox file, on AWS through SES from `MAIL_FROM`; the SES client is loaded
 * on the first mail, so a local run never loads it.
 */
function connectMailer(env: Env, aws: AwsClients, tool: string): Mailer {
  if (env.OUTBOX_FILE) return outboxMailer(env.OUTBOX_FILE);
  const from = requireEnv(env, 'MAIL_FROM', tool);
  const ses = lazy(async () => {
    const [{ SESv2Client }, { sesMailer }] = await Promise.all([
      import('@aws-sdk/client-sesv2'),
      import('./ses-mailer.ts'),
    ]);
    return sesMailer(aws.traced(new SESv2Client({ endpoint: env.AWS_ENDPOINT_URL_SESV2, region: aws.region })), from);
  });
  return { send: async (mail) => (await ses()).send(mail) };
}

/**
 * Mail `body` to the verified sender of the inbound mail the execution started with (the only source of the
 * recipient), in its thread.
 */
async function mailSender(ctx: ToolContext, mailer: Mailer, tool: string, body: string, subject?: string) {
  const parsed = EmailInputSchema.safeParse(ctx.input);
  if (!parsed.success)
    throw new InvalidInputError(
      `${tool} answers an inbound email: this execution was not started by the email trigger`,
    );
  const { email } = parsed.data;
  const to = email.from;
  const { messageId } = await mailer.send({
    to,
    subject: replySubject(email.subject, subject),
    body,
    ...(email.messageId ? { inReplyTo: email.messageId } : {}),
    execution: ctx.execution.name,
    step: ctx.step,
  });
  return { sent: true, to, messageId };
}

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
 * step sends nothing more).
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
  connect: (env, aws) => connectMailer(env, aws, 'send_email'),
  run: (args, ctx, mailer) => mailSender(ctx, mailer, 'send_email', args.body, args.subject),
});

export const AskCustomerArgs = z.strictObject({
  body: z
    .string()
    .trim()
    .min(1)
    .max(20_000)
    .describe('The plain-text question. It always goes to the customer who wrote in, in their thread.'),
});

/**
 * `ask_customer`, the email trigger's question tool (a workflow offers it by re-exporting it from
 * its `tools/ask-customer.ts`): a mail to the verified sender of the inbound mail, in its thread
 * (In-Reply-To and References name it), so the customer's answer names the thread too and the
 * ingress delivers it as a `stepwise.email` `Email Reply` event to the execution that waits for it
 * (an `event` step matching `thread` on the inbound Message-ID). One mail per (execution, step):
 * a question and a later reminder are two steps, two mails.
 */
export const askCustomer = defineTool({
  name: 'ask_customer',
  description:
    'Ask the customer who sent the email being handled a question, in their email thread; their answer comes back to this workflow. The recipient is fixed; only the text is yours. One mail per step: a second call in the same step sends nothing and returns the result of the first with replayed: true.',
  input: AskCustomerArgs,
  idempotency: 'step',
  personal: ['body'],
  replyArg: 'body',
  resources: { sendEmail: true },
  connect: (env, aws) => connectMailer(env, aws, 'ask_customer'),
  run: (args, ctx, mailer) => mailSender(ctx, mailer, 'ask_customer', args.body),
});
