import type { EmailStore } from './store.ts';
import type { EventLog } from '../../lib/event-log.ts';
import {
  executionNameFor,
  isRejection,
  parseInbound,
  screen,
  sesReceiptFromHeaders,
  type IngressPolicy,
  type RejectReason,
  type SesReceipt,
} from './checks.ts';
import type { ExecutionStarter } from './starter.ts';

export interface IngestDeps {
  emails: EmailStore;
  starter: ExecutionStarter;
  events: EventLog;
  policy: IngressPolicy;
  clock: () => Date;
}

export type IngestResult =
  | { status: 'STARTED' | 'DUPLICATE'; executionName: string }
  | { status: 'REJECTED'; executionName: string; reason: RejectReason; detail: string };

/**
 * The ingress use case: screen one inbound mail and, if it passes, store its body and start the
 * workflow under a name derived from the SES message id.
 *
 * - Refused mail gets an `IngressRejected` event with the reason code and no reply.
 * - Accepted mail: body stored (cut to `policy.maxBodyChars` with a size note), execution started
 *   with `{ email }`, then `IngressAccepted` recorded.
 * - Duplicate delivery: Step Functions refuses the reused name (`DUPLICATE`). For a Standard
 *   workflow that is still running with the *same* input, StartExecution succeeds without
 *   starting anything; the already-recorded `IngressAccepted` event tells that case apart.
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
  const executionName = executionNameFor(sesMessageId);
  const at = deps.clock().toISOString();
  const parsed = await parseInbound(raw, deps.policy);
  const screening = isRejection(parsed)
    ? parsed
    : screen(parsed, receipt ?? sesReceiptFromHeaders(parsed.headers), deps.policy, { id: sesMessageId, receivedAt: at });

  if (isRejection(screening)) {
    const from = isRejection(parsed) ? undefined : parsed.from?.address;
    await deps.events.append({
      type: 'IngressRejected',
      executionName,
      at,
      emailId: sesMessageId,
      reason: screening.rejected,
      detail: screening.detail,
      personal: from === undefined ? {} : { from },
    });
    return { status: 'REJECTED', executionName, reason: screening.rejected, detail: screening.detail };
  }

  const { accepted: email, body } = screening;
  await deps.emails.put(email, body);
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
  return { status: started === 'STARTED' && first ? 'STARTED' : 'DUPLICATE', executionName };
}
