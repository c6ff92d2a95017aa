import { createHash } from 'node:crypto';
import type { EventLog } from '../../event-log.ts';
import {
  type Envelope,
  executionNameFor,
  type IngressPolicy,
  isRejection,
  type ParsedMail,
  parseInbound,
  type Rejection,
  type RejectReason,
  referencedIds,
  type Screening,
  type SesReceipt,
  screen,
  senderAuthenticated,
  sesReceiptFromHeaders,
} from './checks.ts';
import type { EmailReplyDetail } from './reply-event.ts';
import type { ExecutionStarter } from './starter.ts';
import type { EmailStore, Thread } from './store.ts';

/** Where replies go as outside events: EventBridge deployed, the local event steps locally. */
export interface ReplyEvents {
  put(detail: EmailReplyDetail, time: string): Promise<void>;
}

export interface IngestDeps {
  emails: EmailStore;
  starter: ExecutionStarter;
  events: EventLog;
  policy: IngressPolicy;
  clock: () => Date;
  /**
   * Set when the workflow waits for replies (an `event` step on `stepwise.email` / `Email Reply`):
   * then a mail answering a thread an accepted mail opened becomes an event instead of an execution.
   * @default replies start executions like any mail
   */
  replies?: ReplyEvents;
}

/**
 * `executionName` is the execution that handles (or handled) the mail; for a reply delivered as an
 * event (`REPLIED`), the name the mail is recorded under (the execution waiting for it is the
 * resumer's to find).
 */
export type IngestResult =
  | { status: 'STARTED'; executionName: string }
  | { status: 'REPLIED'; executionName: string; thread: string }
  | {
      status: 'DUPLICATE';
      executionName: string;
      /**
       * A re-sent mail (same sender and Message-ID, new SES id): the execution name its own `IngressRejected` event is
       * recorded under.
       */
      recordedAs?: string;
    }
  | { status: 'REJECTED'; executionName: string; reason: RejectReason; detail: string };

/** Whose Message-ID: scoped by sender, so nobody can pre-empt another sender's mail by reusing its id. */
const messageIdClaim = (from: string, messageId: string) =>
  createHash('sha256').update(`${from}\n${messageId}`).digest('hex');

/** The first thread of an accepted mail that `parsed` answers, if any (see `referencedIds`). */
async function answeredThread(parsed: ParsedMail, emails: EmailStore): Promise<Thread | undefined> {
  for (const id of referencedIds(parsed.headers)) {
    const thread = await emails.thread(id);
    if (thread) return thread;
  }
  return undefined;
}

/** Records a refused mail's `IngressRejected` event. */
type Reject = (reason: RejectReason, detail: string) => Promise<unknown>;

/**
 * A screened mail answering `thread`, an accepted mail's (see {@link ingest}): stored and put as a
 * reply event when it comes from the address the thread's first mail came from, else refused.
 */
async function deliverReply(
  thread: Thread,
  { accepted: email, body }: Exclude<Screening, Rejection>,
  { emails, replies }: { emails: EmailStore; replies: ReplyEvents },
  { executionName, at, reject }: { executionName: string; at: string; reject: Reject },
): Promise<IngestResult> {
  if (thread.contested || thread.from !== email.from) {
    const detail = thread.contested
      ? 'a reply to a thread whose Message-ID mails of two senders used: delivered to no execution'
      : "a reply to a known thread from an address other than the one the thread's first mail came from: delivered to no execution";
    await reject('reply_from_other_address', detail);
    return { status: 'REJECTED', executionName, reason: 'reply_from_other_address', detail };
  }
  await emails.put(email, body);
  const { from, subject, messageId } = email;
  await replies.put({ thread: thread.messageId, from, subject, text: body, messageId }, at);
  return { status: 'REPLIED', executionName, thread: thread.messageId };
}

/**
 * The ingress use case: screen one inbound mail and, if it passes, store its body and start the
 * workflow under a name derived from the SES message id. Both runtimes run this same code; only
 * the SES message id differs (SES's own, or `localSesMessageId` locally).
 *
 * - Refused mail gets an `IngressRejected` event with the reason code and no reply.
 * - Accepted mail: body stored (cut to `policy.maxBodyChars` with a size note), execution started
 *   with `{ email }`, then `IngressAccepted` recorded.
 * - Duplicates are caught twice, on what each party controls:
 *   - the same delivery again (what SES controls: the SES message id): Step Functions refuses the
 *     reused execution name (`DUPLICATE`). For a Standard workflow still running with the *same*
 *     input, StartExecution succeeds without starting anything; the already-recorded
 *     `IngressAccepted` event tells that case apart.
 *   - the same mail sent again (what the sender controls: From + Message-ID, claimed with a
 *     conditional write): SES gives it a new id, so nothing else would stop a second run. It is
 *     recorded as `IngressRejected` (`duplicate_message_id`, naming the first execution) under its
 *     own execution name, and starts nothing (`DUPLICATE`).
 * - With `deps.replies`, a mail that names in In-Reply-To/References the Message-ID of a mail that
 *   started an execution (the thread's first) and passed every check above is the customer's
 *   answer: stored and put as a `stepwise.email` `Email Reply` event for the execution waiting in
 *   that thread (`REPLIED`), never a new execution. Only the address the thread's first mail came
 *   from may answer: a reply from any other (spoofed, forwarded), or to a thread two senders'
 *   mails share a Message-ID of, is `IngressRejected` (`reply_from_other_address`) and delivered
 *   nowhere. Accepted mail is recorded as the first of its thread.
 *
 * @param receipt The SES receipt verdicts; `undefined` reads them from the headers SES adds to
 *   stored mail (the local path, see `sesReceiptFromHeaders`).
 * @param sesMessageId The SES message id (locally `localSesMessageId(raw)`).
 */
export async function ingest(
  raw: Uint8Array | string,
  receipt: SesReceipt | undefined,
  sesMessageId: string,
  deps: IngestDeps,
): Promise<IngestResult> {
  const envelope: Envelope = { id: sesMessageId, receivedAt: deps.clock().toISOString() };
  return ingestParsed(await parseInbound(raw, deps.policy), receipt, envelope, deps);
}

/**
 * {@link ingest} of a mail its caller has already parsed (`parseInbound` with `deps.policy`, a
 * refusal included) and received as `envelope` says (`id`: the SES message id), so that a caller
 * that reads the mail too (the local session reports its Message-ID) parses it only once.
 */
export async function ingestParsed(
  parsed: ParsedMail | Rejection,
  receipt: SesReceipt | undefined,
  envelope: Envelope,
  deps: Omit<IngestDeps, 'clock'>,
): Promise<IngestResult> {
  const executionName = executionNameFor(envelope.id);
  const at = envelope.receivedAt;
  const verdicts = isRejection(parsed)
    ? undefined
    : (receipt ?? sesReceiptFromHeaders(parsed.headers, parsed.from?.address));
  const screening = isRejection(parsed) ? parsed : screen(parsed, verdicts!, deps.policy, envelope);
  const from = isRejection(parsed) ? undefined : parsed.from?.address;
  const reject = (reason: RejectReason, detail: string) =>
    deps.events.append({
      type: 'IngressRejected',
      executionName,
      at,
      emailId: envelope.id,
      reason,
      detail,
      personal: from === undefined ? {} : { from },
    });

  if (isRejection(screening)) {
    await reject(screening.rejected, screening.detail);
    return { status: 'REJECTED', executionName, reason: screening.rejected, detail: screening.detail };
  }

  const { accepted: email, body } = screening;
  // The stricter sender policy: an unauthenticated From gets no automatic reply; the mail is stored for a person.
  if (
    deps.policy.requireAuthenticatedSender &&
    !isRejection(parsed) &&
    !senderAuthenticated(parsed.headers, verdicts!, email.from)
  ) {
    await deps.emails.put(email, body);
    const detail =
      'held for a person: neither a DMARC pass nor an SPF or DKIM pass aligned with the From domain; no automatic reply';
    await reject('unauthenticated_sender', detail);
    return { status: 'REJECTED', executionName, reason: 'unauthenticated_sender', detail };
  }
  if (email.messageId) {
    const holder = await deps.emails.claimMessageId(messageIdClaim(email.from, email.messageId), email.id);
    if (holder !== email.id) {
      const original = executionNameFor(holder);
      await reject('duplicate_message_id', `this Message-ID was already delivered as ${original}; nothing new started`);
      return { status: 'DUPLICATE', executionName: original, recordedAs: executionName };
    }
  }
  const thread = deps.replies && !isRejection(parsed) ? await answeredThread(parsed, deps.emails) : undefined;
  if (thread && deps.replies)
    return deliverReply(
      thread,
      screening,
      { emails: deps.emails, replies: deps.replies },
      { executionName, at, reject },
    );
  await deps.emails.put(email, body);
  if (email.messageId) await deps.emails.claimThread(email.messageId, email.from, email.id);
  const started = await deps.starter.start(executionName, { email });
  // Recorded after the start, so a delivery that failed in between still gets its event on redelivery.
  const first = await deps.events.append({
    type: 'IngressAccepted',
    executionName,
    at,
    emailId: email.id,
    bodyChars: email.bodyChars,
    personal: { from: email.from, subject: email.subject },
  });
  // A concurrent redelivery may record the event first: then a definitive starter still knows who started.
  return {
    status: started === 'STARTED' && (first || deps.starter.definitive) ? 'STARTED' : 'DUPLICATE',
    executionName,
  };
}
