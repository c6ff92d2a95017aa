/**
 * The outside event a customer's reply becomes (see `ingest`): what an `event` step waits for to
 * continue when the customer answers the question `ask_customer` sent in their thread.
 */
import type { WorkflowDefinition } from '../../../definitions/workflow/schema.ts';

export const EMAIL_REPLY_SOURCE = 'stepwise.email';
export const EMAIL_REPLY_DETAIL_TYPE = 'Email Reply';

/** An `Email Reply` event's detail; `thread` is the Message-ID of the thread's first inbound mail, as recorded. */
export interface EmailReplyDetail {
  thread: string;
  from: string;
  subject: string;
  /** The body text, cut to the policy's `maxBodyChars` like any inbound body. */
  text: string;
  messageId: string;
}

/** The bus a workflow's replies go on: that of its event step waiting for an `Email Reply`; undefined when none does. */
export const replyBus = (def: WorkflowDefinition): string | undefined =>
  def.steps.find((s) => s.event?.source === EMAIL_REPLY_SOURCE && s.event.detailType === EMAIL_REPLY_DETAIL_TYPE)?.event
    ?.bus;
