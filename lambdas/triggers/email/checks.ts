/**
 * The pure half of the SES ingress: parse the raw MIME, read the receipt verdicts, and decide
 * whether a mail may start a workflow. No I/O here; `ingest.ts` applies the decision.
 */
import { createHash } from 'node:crypto';
import PostalMime from 'postal-mime';
import { z } from 'zod';
import type { InboundEmail } from './inbound.ts';

/** Why a mail was refused. Refused mail is recorded in the event log and never answered. */
export const REJECT_REASONS = [
  'too_large',
  'malformed_mime',
  'virus',
  'spam',
  'spf_fail',
  'dkim_fail',
  'dmarc_fail',
  'no_sender',
  'own_address',
  'auto_submitted',
  'bulk_precedence',
  'mailing_list',
  'empty_return_path',
] as const;
export type RejectReason = (typeof REJECT_REASONS)[number];

export interface Rejection {
  rejected: RejectReason;
  /** One line for the event log; no personal data. */
  detail: string;
}

export const VerdictStatus = z.enum(['PASS', 'FAIL', 'GRAY', 'PROCESSING_FAILED']);
export type VerdictStatus = z.infer<typeof VerdictStatus>;
const Verdict = z.object({ status: VerdictStatus });

/** The verdict part of an SES receipt (`Records[].ses.receipt` of the SES Lambda-action event). */
export const SesReceiptSchema = z.object({
  spamVerdict: Verdict,
  virusVerdict: Verdict,
  spfVerdict: Verdict,
  dkimVerdict: Verdict,
  dmarcVerdict: Verdict,
});
export type SesReceipt = z.infer<typeof SesReceiptSchema>;

export interface IngressPolicy {
  /** Largest raw message (bytes) that is parsed at all. */
  maxBytes: number;
  /** Longest body text stored for the model; longer bodies are cut and end with a size note. */
  maxBodyChars: number;
  /** Our own addresses (the reply sender, the receiving addresses), lower-case: mail from them is a loop. */
  ownAddresses: readonly string[];
}

/** @default 10 MiB raw, 20 000 body characters, no own addresses (the handler adds MAIL_FROM and the recipients). */
export const DEFAULT_POLICY: IngressPolicy = { maxBytes: 10 * 1024 * 1024, maxBodyChars: 20_000, ownAddresses: [] };

/** A mail postal-mime could read, reduced to what the checks and the workflow need. */
export interface ParsedMail {
  sizeBytes: number;
  /** Every header in document order (topmost first), keys lower-case. */
  headers: ReadonlyArray<{ key: string; value: string }>;
  /** The From mailbox; undefined when the header is missing, a group, or has no address. */
  from?: { address: string; name: string };
  to: string[];
  subject: string;
  /** `''` when absent. */
  messageId: string;
  /** The text body; derived from the HTML part when the mail has no text part. */
  text: string;
}

const encoder = new TextEncoder();
// RFC 5322 field names: printable US-ASCII except the colon.
const FIELD_NAME = /^[\x21-\x39\x3b-\x7e]+$/;

/**
 * Parse raw MIME with postal-mime. Oversized input is refused before parsing; input the parser
 * rejects (nesting, header size limits) or that has no valid header block comes back as a
 * `malformed_mime` refusal instead of an exception.
 */
export async function parseInbound(
  raw: Uint8Array | string,
  opts: Pick<IngressPolicy, 'maxBytes'>,
): Promise<ParsedMail | Rejection> {
  const bytes = typeof raw === 'string' ? encoder.encode(raw) : raw;
  if (bytes.byteLength > opts.maxBytes)
    return { rejected: 'too_large', detail: `${bytes.byteLength} bytes exceeds the limit of ${opts.maxBytes}` };
  let mail;
  try {
    mail = await PostalMime.parse(bytes);
  } catch (e) {
    return { rejected: 'malformed_mime', detail: `unparseable MIME: ${(e as Error).message}` };
  }
  if (mail.headers.length === 0) return { rejected: 'malformed_mime', detail: 'no header section' };
  const bad = mail.headers.find((h) => !FIELD_NAME.test(h.key));
  if (bad) return { rejected: 'malformed_mime', detail: 'invalid header line' };
  const contentType = mail.headers.find((h) => h.key === 'content-type')?.value ?? '';
  if (/^\s*multipart\//i.test(contentType) && !/boundary\s*=/i.test(contentType))
    return { rejected: 'malformed_mime', detail: 'multipart message without a boundary' };

  const from = mail.from && !mail.from.group && mail.from.address ? mail.from : undefined;
  return {
    sizeBytes: bytes.byteLength,
    headers: mail.headers.map(({ key, value }) => ({ key, value })),
    from: from && { address: from.address.toLowerCase(), name: from.name },
    to: (mail.to ?? []).flatMap((a) => (a.group ? a.group : [a])).map((m) => m.address.toLowerCase()).filter(Boolean),
    subject: mail.subject ?? '',
    messageId: mail.messageId?.trim() ?? '',
    text: (mail.text ?? (mail.html ? htmlToText(mail.html) : '')).trim(),
  };
}

/** The first (topmost) value of a header. Receiving servers prepend, so the topmost is the one our side added. */
function headerValue(headers: ParsedMail['headers'], name: string): string | undefined {
  return headers.find((h) => h.key === name)?.value;
}

/** Plain text from an HTML-only mail: enough for the model to read, not a renderer. */
export function htmlToText(html: string): string {
  const entities: Record<string, string> = {
    amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ',
    ndash: '\u2013', mdash: '\u2014', hellip: '\u2026', lsquo: '\u2018', rsquo: '\u2019', ldquo: '\u201c', rdquo: '\u201d',
  };
  return html
    .replace(/<(script|style|head)\b[\s\S]*?<\/\1\s*>/gi, '')
    .replace(/<br\s*\/?>/gi, '\n')
    .replace(/<\/(p|div|li|tr|h[1-6]|blockquote)\s*>/gi, '\n')
    .replace(/<[^>]*>/g, '')
    .replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (m, e: string) =>
      e[0] === '#'
        ? String.fromCodePoint(e[1] === 'x' || e[1] === 'X' ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10))
        : (entities[e.toLowerCase()] ?? m),
    )
    .replace(/[ \t]+/g, ' ')
    .replace(/\n\s*\n\s*\n+/g, '\n\n')
    .trim();
}

const SPF_OR_DKIM: Record<string, VerdictStatus> = {
  pass: 'PASS',
  fail: 'FAIL',
  hardfail: 'FAIL',
  permerror: 'PROCESSING_FAILED',
  temperror: 'PROCESSING_FAILED',
};

function toStatus(result: string | undefined): VerdictStatus {
  // softfail, neutral, none, policy and anything unknown are "no verdict" (GRAY), as SES reports them.
  return (result && SPF_OR_DKIM[result.toLowerCase()]) || 'GRAY';
}

/** `spf=pass`, `dkim=fail`, ... of an Authentication-Results value, comments removed. Several dkim= results (several signatures): any pass wins. */
function authResults(value: string | undefined): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const part of (value ?? '').replace(/\([^)]*\)/g, '').split(';')) {
    const m = /^\s*(spf|dkim|dmarc)\s*=\s*([a-z]+)/i.exec(part);
    if (m) (out[m[1]!.toLowerCase()] ??= []).push(m[2]!.toLowerCase());
  }
  return out;
}

function combined(results: string[] | undefined): VerdictStatus {
  const statuses = (results ?? []).map(toStatus);
  for (const s of ['PASS', 'FAIL', 'PROCESSING_FAILED'] as const) if (statuses.includes(s)) return s;
  return 'GRAY';
}

/**
 * Build the SES receipt verdicts from the headers SES adds to the mail it stores in S3 (locally
 * this is the only receipt there is). Only the topmost copy of each header counts: SES prepends
 * its own, and anything lower was written by the sender.
 *
 * Default when a header is absent: `GRAY` ("no verdict"), the status SES itself uses when it
 * cannot decide. `screen` refuses only a definite `FAIL` (and a virus scan that could not run),
 * so a hand-written local `.eml` without SES headers is processed; a mail that SES judged is
 * refused exactly as in AWS. In AWS the handler uses the verdicts from the SES event instead.
 */
export function sesReceiptFromHeaders(headers: ParsedMail['headers']): SesReceipt {
  const verdict = (name: string): VerdictStatus => {
    const parsed = VerdictStatus.safeParse(headerValue(headers, name)?.trim().toUpperCase());
    return parsed.success ? parsed.data : 'GRAY';
  };
  const auth = authResults(headerValue(headers, 'authentication-results'));
  const receivedSpf = /^\s*([a-z]+)/i.exec(headerValue(headers, 'received-spf') ?? '')?.[1];
  return {
    spamVerdict: { status: verdict('x-ses-spam-verdict') },
    virusVerdict: { status: verdict('x-ses-virus-verdict') },
    spfVerdict: { status: receivedSpf ? toStatus(receivedSpf) : combined(auth.spf) },
    dkimVerdict: { status: combined(auth.dkim) },
    dmarcVerdict: { status: combined(auth.dmarc) },
  };
}

const VERDICT_RULES: Array<[keyof SesReceipt, RejectReason]> = [
  ['virusVerdict', 'virus'],
  ['spamVerdict', 'spam'],
  ['spfVerdict', 'spf_fail'],
  ['dkimVerdict', 'dkim_fail'],
  ['dmarcVerdict', 'dmarc_fail'],
];

const SenderAddress = z.email();

/** Where the mail came from: the SES message id (the body's storage key) and when SES received it. */
export interface Envelope {
  id: string;
  receivedAt: string;
}

export type Screening = { accepted: InboundEmail; body: string } | Rejection;

/**
 * Decide whether a parsed mail may start a workflow. Refusals, in this order: receipt verdicts
 * (a virus scan that failed to run counts as a virus: we cannot show the mail is clean), no
 * usable sender, mail from our own addresses, auto-replies (RFC 3834 `Auto-Submitted` other
 * than `no`, and the common `X-Autoreply`/`X-Autorespond`), bulk mail (`Precedence:
 * bulk|list|junk`), mailing lists (`List-Id`, `List-Unsubscribe`), and an empty Return-Path
 * (bounces). Replying to any of these risks a mail loop or backscatter.
 *
 * The reply address is the From address: it is the one DMARC authenticates. Reply-To is ignored.
 */
export function screen(parsed: ParsedMail, receipt: SesReceipt, policy: IngressPolicy, envelope: Envelope): Screening {
  for (const [key, reason] of VERDICT_RULES) {
    const status = receipt[key].status;
    if (status === 'FAIL' || (key === 'virusVerdict' && status === 'PROCESSING_FAILED'))
      return { rejected: reason, detail: `${key}: ${status}` };
  }
  const h = (name: string) => headerValue(parsed.headers, name);
  if (!parsed.from || !SenderAddress.safeParse(parsed.from.address).success)
    return { rejected: 'no_sender', detail: 'no single valid From address' };
  if (policy.ownAddresses.includes(parsed.from.address))
    return { rejected: 'own_address', detail: 'From is one of our own addresses' };
  const autoSubmitted = h('auto-submitted')?.trim().toLowerCase();
  if (autoSubmitted && autoSubmitted !== 'no')
    return { rejected: 'auto_submitted', detail: `Auto-Submitted: ${autoSubmitted}` };
  for (const name of ['x-autoreply', 'x-autorespond'])
    if (h(name) !== undefined) return { rejected: 'auto_submitted', detail: `${name} present` };
  const precedence = h('precedence')?.trim().toLowerCase();
  if (precedence && ['bulk', 'list', 'junk'].includes(precedence))
    return { rejected: 'bulk_precedence', detail: `Precedence: ${precedence}` };
  for (const name of ['list-id', 'list-unsubscribe'])
    if (h(name) !== undefined) return { rejected: 'mailing_list', detail: `${name} present` };
  const returnPath = h('return-path');
  if (returnPath !== undefined && /^\s*<?\s*>?\s*$/.test(returnPath))
    return { rejected: 'empty_return_path', detail: 'empty Return-Path (a bounce or notification)' };

  const full = parsed.text;
  const body =
    full.length > policy.maxBodyChars
      ? `${full.slice(0, policy.maxBodyChars)}\n\n[body truncated: showing the first ${policy.maxBodyChars} of ${full.length} characters]`
      : full;
  return {
    accepted: {
      id: envelope.id,
      messageId: parsed.messageId,
      from: parsed.from.address,
      ...(parsed.from.name ? { fromName: parsed.from.name } : {}),
      to: parsed.to,
      subject: parsed.subject,
      receivedAt: envelope.receivedAt,
      bodyChars: full.length,
    },
    body,
  };
}

export function isRejection(value: object): value is Rejection {
  return 'rejected' in value;
}

const sha256 = (data: Uint8Array | string) => createHash('sha256').update(data).digest('hex');

/**
 * The local stand-in for an SES message id: a stable hash of the Message-ID header (of the raw
 * bytes when there is none or the mail does not parse), so delivering the same mail twice yields
 * the same id, hence the same execution name.
 */
export async function localSesMessageId(raw: Uint8Array | string): Promise<string> {
  let messageId = '';
  try {
    messageId = (await PostalMime.parse(raw)).messageId?.trim() ?? '';
  } catch {
    // Malformed: hash the bytes; ingest refuses it with the same id each time.
  }
  return sha256(messageId || raw).slice(0, 40);
}

const NAME_SAFE = /^[A-Za-z0-9_-]{1,74}$/;

/**
 * The execution name for an inbound mail: `email-<SES message id>` (SES ids are 40 characters
 * of `[a-z0-9]`); any other id is hashed to stay within Step Functions' 80 characters of
 * `[A-Za-z0-9_-]`. Step Functions refuses a second execution with the same name, which is what
 * makes duplicate deliveries start nothing new.
 */
export function executionNameFor(sesMessageId: string): string {
  return `email-${NAME_SAFE.test(sesMessageId) ? sesMessageId : sha256(sesMessageId).slice(0, 40)}`;
}
