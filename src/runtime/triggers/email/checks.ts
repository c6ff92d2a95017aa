/**
 * The pure half of the SES ingress: parse the raw MIME, read the receipt verdicts, and decide
 * whether a mail may start a workflow. No I/O here; `ingest.ts` applies the decision.
 */
import { createHash } from 'node:crypto';
import PostalMime, { type Address, addressParser, type Email, type Mailbox } from 'postal-mime';
import * as z from 'zod';
import {
  type InboundAttachment,
  type InboundEmail,
  MAX_LISTED_ATTACHMENTS,
} from '../../../definitions/workflow/inbound-email.ts';
import { headerText, messageIdOf, messageIdsIn } from './headers.ts';
import { DEFAULT_MAX_HTML_CHARS, htmlToText } from './html.ts';
import { automaticMail } from './loops.ts';

/** Why a mail was refused. Refused mail is recorded in the event log and never answered. */
export const REJECT_REASONS = [
  'too_large',
  'mime_budget',
  'malformed_mime',
  'parse_budget',
  'virus',
  'spam',
  'spf_fail',
  'dkim_fail',
  'dmarc_fail',
  'no_sender',
  'multiple_from',
  'own_address',
  'auto_submitted',
  'bulk_precedence',
  'mailing_list',
  'empty_return_path',
  'bounce',
  'duplicate_message_id',
  'unauthenticated_sender',
  'reply_from_other_address',
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
  /**
   * Most lines a message may have to be parsed: the parser's time and memory grow with the lines,
   * not the bytes (a line of a part that is not base64 costs it ~15 µs and a Blob part of its own,
   * about 2 KB of process memory), so a few MB of short lines would take tens of seconds and
   * exhaust the ingress Lambda's 512 MB. Counted on the raw bytes before parsing. Raise it with
   * `maxBytes` and the function's memory.
   * @default 150 000 (a 10 MiB message of 76-character base64 lines has about 135 000)
   */
  maxMimeLines?: number;
  /**
   * Most MIME part delimiters (lines starting with `--` and a non-blank character) a message may
   * have to be parsed: each part costs the parser a node and a Blob. Counted on the raw bytes before parsing.
   * @default 1 000
   */
  maxMimeParts?: number;
  /** HTML characters converted to text per HTML part (the conversion is linear; this bounds it). @default 1 000 000 */
  maxHtmlChars?: number;
  /**
   * Milliseconds parsing may take before the mail is refused (`parse_budget`). Every parsing step
   * is linear and bounded by the size limits; this is the recorded backstop should one not be.
   * @default 20 000
   */
  parseBudgetMs?: number;
  /** Longest body text stored for the model; longer bodies are cut and end with a size note. */
  maxBodyChars: number;
  /** Our own addresses (the reply sender, the receiving addresses), lower-case: mail from them is a loop. */
  ownAddresses: readonly string[];
  /** Answer only an authenticated From (`senderAuthenticated`); hold anything else for a person. @default false */
  requireAuthenticatedSender?: boolean;
}

/**
 * @default 10 MiB raw, 150 000 lines and 1 000 part delimiters, 1 000 000 HTML characters per
 * part, a 20 s parse budget (the ingress Lambda has 60 s), 20 000 body characters, no own
 * addresses (the handler adds MAIL_FROM and the recipients).
 */
export const DEFAULT_POLICY: Required<IngressPolicy> = {
  maxBytes: 10 * 1024 * 1024,
  maxMimeLines: 150_000,
  maxMimeParts: 1_000,
  maxHtmlChars: DEFAULT_MAX_HTML_CHARS,
  parseBudgetMs: 20_000,
  maxBodyChars: 20_000,
  ownAddresses: [],
  requireAuthenticatedSender: false,
};

/** A mail postal-mime could read, reduced to what the checks and the workflow need. */
export interface ParsedMail {
  sizeBytes: number;
  /** Every header in document order (topmost first), keys lower-case. */
  headers: ReadonlyArray<{ key: string; value: string }>;
  /** The From mailbox when there is exactly one From header holding exactly one mailbox. */
  from?: { address: string; name: string };
  /** Every address of every From header, lower-case (a group's members included). */
  senders: string[];
  /** How many From headers the mail has. */
  fromHeaders: number;
  to: string[];
  subject: string;
  /** The first valid msg-id of the Message-ID header; `''` when there is none. */
  messageId: string;
  /** The text body: the plain-text parts, and HTML parts without a plain alternative converted by `htmlToText`. */
  text: string;
  /** The attachments (inline ones included), in mail order: name, type and size, not content. */
  attachments: InboundAttachment[];
}

const encoder = new TextEncoder();
// RFC 5322 field names: printable US-ASCII except the colon.
const FIELD_NAME = /^[\x21-\x39\x3b-\x7e]+$/;

type TextEntries = Partial<Record<'plain' | 'html', Array<{ type: string; value: unknown }>>>;

/**
 * postal-mime, with the body text assembled in linear time. Upstream renders an HTML part that
 * has no plain-text sibling with a regex converter that is quadratic on some input (`<a href=`
 * repeated without `>`: 200k repetitions took minutes), inside `parse()` itself. This override of
 * its (internal, hence the pinned version) `renderTextContent` uses `htmlToText` instead.
 * Attached messages (`message/rfc822`) stay attachments: a nested parser would bring the
 * upstream converter back, and a forwarded mail is the forwarder's claim, not theirs.
 */
class LinearTextParser extends PostalMime {
  readonly #maxHtmlChars: number;

  constructor(maxHtmlChars: number) {
    super({ forceRfc822Attachments: true, maxNestingDepth: 64, maxHeadersSize: 1024 * 1024 });
    this.#maxHtmlChars = maxHtmlChars;
  }

  renderTextContent(): void {
    const internals = this as unknown as { textMap: Map<unknown, TextEntries>; textContent: Record<string, string> };
    if (!(internals.textMap instanceof Map)) throw new Error('postal-mime internals changed: textMap is missing');
    const plain: string[] = [];
    const html: string[] = [];
    const texts = (entries: TextEntries[keyof TextEntries]) =>
      (entries ?? []).flatMap((e) => (e.type === 'text' && typeof e.value === 'string' ? [e.value] : []));
    for (const entry of internals.textMap.values()) {
      plain.push(
        ...(entry.plain
          ? texts(entry.plain)
          : texts(entry.html).map((h) => htmlToText(h, { maxChars: this.#maxHtmlChars }))),
      );
      html.push(...texts(entry.html));
    }
    internals.textContent = {
      ...(plain.length && { plain: plain.join('\n') }),
      ...(html.length && { html: html.join('\n') }),
    };
  }
}

export interface ParseOptions {
  maxBytes: number;
  /** @default DEFAULT_POLICY.maxMimeLines */
  maxMimeLines?: number;
  /** @default DEFAULT_POLICY.maxMimeParts */
  maxMimeParts?: number;
  /** @default DEFAULT_POLICY.maxHtmlChars */
  maxHtmlChars?: number;
  /** @default DEFAULT_POLICY.parseBudgetMs */
  parseBudgetMs?: number;
  /** Milliseconds clock for the budget. @default performance.now */
  now?: () => number;
}

const mailboxes = (addresses: readonly Address[]): Mailbox[] => addresses.flatMap((a) => (a.group ? a.group : [a]));

const LF = 0x0a;
const DASH = 0x2d;
const BLANK = new Set([0x20, 0x09, 0x0d, LF]);

/**
 * What drives the parser's cost, counted on the raw bytes in one pass: lines, and lines that
 * could delimit a MIME part (`--` then a non-blank character, an upper bound on the parts
 * whatever the boundaries are or how they are declared). Counting stops as soon as a count passes
 * its limit, so refusing a bomb costs the limit's worth of lines, not the bomb's.
 */
export function mimeShape(
  bytes: Uint8Array,
  limits: { lines: number; delimiters: number } = { lines: Infinity, delimiters: Infinity },
): { lines: number; delimiters: number } {
  let lines = 1;
  let delimiters = 0;
  for (let start = 0; start < bytes.length && lines <= limits.lines && delimiters <= limits.delimiters; ) {
    if (bytes[start] === DASH && bytes[start + 1] === DASH && start + 2 < bytes.length && !BLANK.has(bytes[start + 2]!))
      delimiters++;
    const end = bytes.indexOf(LF, start);
    if (end < 0) break;
    lines++;
    start = end + 1;
  }
  return { lines, delimiters };
}

/**
 * Parse raw MIME with postal-mime. Input over the budget is refused before parsing: over
 * `maxBytes` as `too_large`, over `maxMimeLines` lines or `maxMimeParts` part delimiters as
 * `mime_budget` (see `mimeShape`). Input the parser rejects (nesting, header size limits) or that
 * has no valid header block comes back as a `malformed_mime` refusal instead of an exception, and
 * a parse over its time budget as `parse_budget`.
 */
export async function parseInbound(raw: Uint8Array | string, opts: ParseOptions): Promise<ParsedMail | Rejection> {
  const {
    maxHtmlChars = DEFAULT_POLICY.maxHtmlChars,
    parseBudgetMs = DEFAULT_POLICY.parseBudgetMs,
    maxMimeLines = DEFAULT_POLICY.maxMimeLines,
    maxMimeParts = DEFAULT_POLICY.maxMimeParts,
    now = () => performance.now(),
  } = opts;
  const bytes = typeof raw === 'string' ? encoder.encode(raw) : raw;
  if (bytes.byteLength > opts.maxBytes)
    return { rejected: 'too_large', detail: `${bytes.byteLength} bytes exceeds the limit of ${opts.maxBytes}` };
  const shape = mimeShape(bytes, { lines: maxMimeLines, delimiters: maxMimeParts });
  if (shape.lines > maxMimeLines)
    return { rejected: 'mime_budget', detail: `more than ${maxMimeLines} lines: not parsed` };
  if (shape.delimiters > maxMimeParts)
    return { rejected: 'mime_budget', detail: `more than ${maxMimeParts} MIME part delimiters: not parsed` };
  const started = now();
  let mail: Email;
  try {
    mail = await new LinearTextParser(maxHtmlChars).parse(bytes);
  } catch (e) {
    return { rejected: 'malformed_mime', detail: `unparseable MIME: ${(e as Error).message}` };
  }
  const elapsed = now() - started;
  if (elapsed > parseBudgetMs)
    return {
      rejected: 'parse_budget',
      detail: `parsing took ${Math.round(elapsed)} ms, over the budget of ${parseBudgetMs} ms`,
    };
  if (mail.headers.length === 0) return { rejected: 'malformed_mime', detail: 'no header section' };
  const bad = mail.headers.find((h) => !FIELD_NAME.test(h.key));
  if (bad) return { rejected: 'malformed_mime', detail: 'invalid header line' };
  const contentType = mail.headers.find((h) => h.key === 'content-type')?.value ?? '';
  if (/^\s*multipart\//i.test(contentType) && !/boundary\s*=/i.test(contentType))
    return { rejected: 'malformed_mime', detail: 'multipart message without a boundary' };

  // Every From header and every mailbox in them, not just postal-mime's first: a second From is
  // how a mail gets answered at an address other than the one DMARC checked.
  const fromValues = mail.headers.filter((h) => h.key === 'from').map((h) => h.value);
  const fromAddresses = fromValues.flatMap((v) => addressParser(v));
  const senders = mailboxes(fromAddresses).filter((m) => m.address);
  // RFC 5322 allows no group in From; one that names a single mailbox is still refused.
  const from =
    fromValues.length === 1 && senders.length === 1 && !fromAddresses.some((a) => a.group) ? senders[0] : undefined;
  return {
    sizeBytes: bytes.byteLength,
    headers: mail.headers.map(({ key, value }) => ({ key, value })),
    from: from && { address: from.address.toLowerCase(), name: headerText(from.name) },
    senders: senders.map((m) => m.address.toLowerCase()),
    fromHeaders: fromValues.length,
    to: mailboxes(mail.to ?? [])
      .map((m) => m.address.toLowerCase())
      .filter(Boolean),
    subject: mail.subject ?? '',
    messageId: messageIdOf(mail.messageId),
    text: (mail.text ?? '').trim(),
    attachments: mail.attachments.map((a) => ({
      name: headerText(a.filename ?? '', 200) || 'unnamed',
      contentType: a.mimeType.slice(0, 200),
      bytes: typeof a.content === 'string' ? encoder.encode(a.content).byteLength : a.content.byteLength,
    })),
  };
}

/** The first (topmost) value of a header. Receiving servers prepend, so the topmost is the one our side added. */
function headerValue(headers: ParsedMail['headers'], name: string): string | undefined {
  return headers.find((h) => h.key === name)?.value;
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

/** Longest Authentication-Results value read: SES writes a few hundred characters; this keeps every regex below on small input. */
const MAX_AUTH_RESULTS_CHARS = 4096;

/**
 * `spf=pass`, `dkim=fail`, ... of an Authentication-Results value, comments removed. Several dkim=
 * results (several signatures): any pass wins. A `dmarc=` result that names a `header.from`
 * domain other than `fromDomain` is about another mail's From and is not counted.
 */
function authResults(value: string | undefined, fromDomain: string | undefined): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  // Comments never nest in what SES writes; `[^()]` keeps the pattern linear.
  for (const part of (value ?? '')
    .slice(0, MAX_AUTH_RESULTS_CHARS)
    .replace(/\([^()]*\)/g, '')
    .split(';')) {
    const m = /^\s*(spf|dkim|dmarc)\s*=\s*([a-z]+)/i.exec(part);
    if (!m) continue;
    const method = m[1]!.toLowerCase();
    const headerFrom = /\bheader\.from\s*=\s*"?([^\s;"]+)/i.exec(part)?.[1]?.toLowerCase();
    if (method === 'dmarc' && headerFrom && fromDomain && headerFrom !== fromDomain) continue;
    (out[method] ??= []).push(m[2]!.toLowerCase());
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
 *
 * @param fromAddress The mail's From address. A DMARC result for another `header.from` domain says
 *   nothing about this mail and is ignored (a pass for a second From is not a pass for this one).
 */
export function sesReceiptFromHeaders(headers: ParsedMail['headers'], fromAddress?: string): SesReceipt {
  const verdict = (name: string): VerdictStatus => {
    const parsed = VerdictStatus.safeParse(headerValue(headers, name)?.trim().toUpperCase());
    return parsed.success ? parsed.data : 'GRAY';
  };
  const fromDomain = fromAddress?.slice(fromAddress.lastIndexOf('@') + 1).toLowerCase();
  const auth = authResults(headerValue(headers, 'authentication-results'), fromDomain);
  const receivedSpf = /^\s*([a-z]+)/i.exec(headerValue(headers, 'received-spf')?.slice(0, 64) ?? '')?.[1];
  return {
    spamVerdict: { status: verdict('x-ses-spam-verdict') },
    virusVerdict: { status: verdict('x-ses-virus-verdict') },
    spfVerdict: { status: receivedSpf ? toStatus(receivedSpf) : combined(auth.spf) },
    dkimVerdict: { status: combined(auth.dkim) },
    dmarcVerdict: { status: combined(auth.dmarc) },
  };
}

/** Whether `domain` and `fromDomain` align (DMARC relaxed mode): equal, or one a subdomain of the other with at least two labels in common. */
function aligned(domain: string | undefined, fromDomain: string): boolean {
  if (!domain) return false;
  const d = domain.toLowerCase().replace(/^@/, '').replace(/\.$/, '');
  const [shorter, longer] = d.length <= fromDomain.length ? [d, fromDomain] : [fromDomain, d];
  return shorter.includes('.') && (longer === shorter || longer.endsWith(`.${shorter}`));
}

/**
 * Whether the From address is authenticated: DMARC passed (for this From, see `sesReceiptFromHeaders`),
 * or the topmost Authentication-Results has an SPF pass whose `smtp.mailfrom` domain, or a DKIM pass
 * whose `header.d` / `header.i` domain, aligns with the From domain. The stricter sender policy
 * answers only such mail.
 */
export function senderAuthenticated(headers: ParsedMail['headers'], receipt: SesReceipt, fromAddress: string): boolean {
  if (receipt.dmarcVerdict.status === 'PASS') return true;
  const fromDomain = fromAddress.slice(fromAddress.lastIndexOf('@') + 1).toLowerCase();
  const value = (headerValue(headers, 'authentication-results') ?? '')
    .slice(0, MAX_AUTH_RESULTS_CHARS)
    .replace(/\([^()]*\)/g, '');
  return value.split(';').some((part) => {
    const m = /^\s*(spf|dkim)\s*=\s*pass\b/i.exec(part);
    if (!m) return false;
    const property = (name: string) => new RegExp(`\\b${name}\\s*=\\s*"?([^\\s;"]+)`, 'i').exec(part)?.[1];
    if (m[1]!.toLowerCase() === 'spf') return aligned(property('smtp\\.mailfrom')?.split('@').pop(), fromDomain);
    return aligned(property('header\\.d'), fromDomain) || aligned(property('header\\.i')?.split('@').pop(), fromDomain);
  });
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
 * The mailbox an address delivers to: lower-case, without a subaddress (`claims+x@d` is `claims@d`,
 * RFC 5233), since mail to `claims+anything` lands in the `claims` inbox and a reply to it would loop.
 */
const mailbox = (address: string): string => address.toLowerCase().replace(/\+[^@]*(?=@[^@]*$)/, '');

/**
 * Decide whether a parsed mail may start a workflow. Refusals, in this order: receipt verdicts
 * (a virus scan that failed to run counts as a virus: we cannot show the mail is clean), not
 * exactly one From mailbox (several From headers or addresses: which one DMARC checked is
 * unknowable, so none is answered), no usable sender, mail from our own addresses, then any
 * automatic mail (auto-replies, bounces, bulk and list mail; see `automaticMail`). Replying to
 * any of these risks a mail loop, backscatter, or a reply to someone other than the sender.
 *
 * The reply address is the From address: it is the one DMARC authenticates. Reply-To is ignored.
 */
export function screen(parsed: ParsedMail, receipt: SesReceipt, policy: IngressPolicy, envelope: Envelope): Screening {
  for (const [key, reason] of VERDICT_RULES) {
    const status = receipt[key].status;
    if (status === 'FAIL' || (key === 'virusVerdict' && status === 'PROCESSING_FAILED'))
      return { rejected: reason, detail: `${key}: ${status}` };
  }
  if (parsed.fromHeaders > 1 || parsed.senders.length > 1)
    return {
      rejected: 'multiple_from',
      detail: `${parsed.fromHeaders} From headers with ${parsed.senders.length} addresses; exactly one is required`,
    };
  if (!parsed.from || !SenderAddress.safeParse(parsed.from.address).success)
    return { rejected: 'no_sender', detail: 'no single valid From address' };
  const own = new Set(policy.ownAddresses.map(mailbox));
  if (own.has(mailbox(parsed.from.address)))
    return { rejected: 'own_address', detail: 'From is one of our own addresses' };
  const automatic = automaticMail({ headers: parsed.headers, subject: parsed.subject, from: parsed.senders });
  if (automatic) return { rejected: automatic.reason, detail: automatic.detail };

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
      ...(parsed.attachments.length && { attachments: parsed.attachments.slice(0, MAX_LISTED_ATTACHMENTS) }),
    },
    body,
  };
}

/**
 * The mails a mail answers: the message ids of its In-Reply-To and References headers (the topmost
 * of each), In-Reply-To first, each once.
 */
export function referencedIds(headers: ParsedMail['headers']): string[] {
  const ids = [
    ...messageIdsIn(headerValue(headers, 'in-reply-to')),
    ...messageIdsIn(headerValue(headers, 'references')),
  ];
  return [...new Set(ids)];
}

export function isRejection(value: object): value is Rejection {
  return 'rejected' in value;
}

const sha256 = (data: Uint8Array | string) => createHash('sha256').update(data).digest('hex');

/**
 * The local stand-in for an SES message id: a hash of the raw bytes. Like SES, which assigns one
 * id per received copy, the same stored mail delivered again (a retried notification) has the
 * same id, hence the same execution name; a mail sent again is a new copy with a new id, which
 * `ingest` then recognises by its Message-ID, exactly as on AWS.
 */
export async function localSesMessageId(raw: Uint8Array | string): Promise<string> {
  return sha256(raw).slice(0, 40);
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
