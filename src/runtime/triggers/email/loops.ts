/**
 * Is this mail an automatic one (an auto-reply, a bounce, a list or bulk mailing)? Answering any
 * of these risks a mail loop or backscatter, so the ingress refuses them without a reply.
 *
 * The signals, strongest first: RFC 3834 `Auto-Submitted`; the de-facto headers of vendors that
 * ignore it (`X-Autoreply`, `X-Autorespond`, `Precedence: auto_reply`, Exchange's
 * `X-Auto-Response-Suppress`); delivery and disposition reports (RFC 3464/8098
 * `multipart/report`); the null or daemon senders bounces come from; and, for the many servers
 * that mark nothing, the subject prefixes their auto-replies and bounces use in several languages.
 */

/** One header, keys lower-case (as `ParsedMail.headers`). */
export interface HeaderField {
  key: string;
  value: string;
}

export type AutomaticReason = 'auto_submitted' | 'bulk_precedence' | 'mailing_list' | 'empty_return_path' | 'bounce';

export interface Automatic {
  reason: AutomaticReason;
  /** One line for the event log; header names and fixed values only, no personal data. */
  detail: string;
}

/** What the detection reads of a parsed mail. */
export interface MailSignals {
  headers: readonly HeaderField[];
  /** Decoded subject. */
  subject: string;
  /** Addresses of the From header, lower-case. */
  from: readonly string[];
}

// Only the start of a header value is read: enough for every token below, and no regex ever
// sees an attacker's megabyte-long header.
const HEAD = 512;
const first = (headers: readonly HeaderField[], name: string) =>
  headers
    .find((h) => h.key === name)
    ?.value.slice(0, HEAD)
    .trim()
    .toLowerCase();
const has = (headers: readonly HeaderField[], name: string) => headers.some((h) => h.key === name);

/** Exchange's `X-Auto-Response-Suppress` values that ask an auto-responder like us not to answer. */
const SUPPRESSES_AUTO_REPLY = new Set(['all', 'autoreply', 'oof']);
const PRECEDENCE_AUTO = new Set(['auto_reply', 'auto-reply']);
const PRECEDENCE_BULK = new Set(['bulk', 'list', 'junk']);
/** Local parts of the senders bounces and system notices come from (RFC 5321 §4.5.1, RFC 2142). */
const DAEMON_LOCAL_PARTS = new Set(['mailer-daemon', 'postmaster', 'mail-daemon', 'mailerdaemon']);

/**
 * Subject prefixes of auto-replies and bounces (Exchange/Outlook, Gmail, Apple, Postfix, Exim,
 * Lotus and common localisations). Matched at the start of the decoded subject, case-insensitive,
 * after Unicode NFKC normalisation (so full-width or composed letters match too).
 */
const AUTO_SUBJECTS: readonly string[] = [
  // English
  'automatic reply',
  'auto reply',
  'auto-reply',
  'autoreply',
  'auto response',
  'auto-response',
  'autoresponse',
  'out of office',
  'out of the office',
  'ooo:',
  'away from the office',
  'vacation reply',
  // German
  'abwesenheitsnotiz',
  'automatische antwort',
  'abwesenheit:',
  'automatische abwesenheitsnotiz',
  // French
  'réponse automatique',
  'reponse automatique',
  'absence du bureau',
  "message d'absence",
  'absent du bureau',
  // Spanish
  'respuesta automática',
  'respuesta automatica',
  'fuera de la oficina',
  'respuesta de ausencia',
  // Italian
  'risposta automatica',
  'fuori ufficio',
  "fuori dall'ufficio",
  // Dutch
  'automatisch antwoord',
  'afwezigheidsbericht',
  // Portuguese
  'resposta automática',
  'resposta automatica',
  'ausente do escritório',
  'fora do escritório',
  // Nordic, Polish, Czech, Finnish, Turkish
  'automatisk svar',
  'autosvar',
  'automaattinen vastaus',
  'poissa toimistolta',
  'odpowiedź automatyczna',
  'automatyczna odpowiedź',
  'automatická odpověď',
  'otomatik yanıt',
  'otomatik cevap',
  // Russian, Ukrainian, Greek
  'автоответ',
  'автоматический ответ',
  'автоматична відповідь',
  'αυτόματη απάντηση',
  // Chinese, Japanese, Korean
  '自动回复',
  '自動回覆',
  '自動回复',
  '自動応答',
  '自動返信',
  '자동 응답',
  '자동 회신',
];
const BOUNCE_SUBJECTS: readonly string[] = [
  'undeliverable',
  'undelivered mail',
  'delivery status notification',
  'delivery failure',
  'delivery has failed',
  'mail delivery failed',
  'mail delivery subsystem',
  'returned mail',
  'failure notice',
  'mail system error',
  'unzustellbar',
  'nicht zustellbar',
  'non remis',
  'non distribuable',
  'no se puede entregar',
  'no entregado',
  'non recapitabile',
  'impossibile recapitare',
  'onbestelbaar',
  'não entregue',
  'nao entregue',
  'kan inte levereras',
  'niedostarczalne',
  'nedoručitelné',
  'не доставлено',
  '无法送达',
  '配信不能',
  '전달되지 않음',
];

const localPart = (address: string) => {
  const at = address.lastIndexOf('@');
  return (at < 0 ? address : address.slice(0, at)).toLowerCase();
};

const normalize = (s: string) => s.normalize('NFKC').slice(0, HEAD).replace(/\s+/g, ' ').trim().toLowerCase();
const AUTO_SUBJECT_FORMS = AUTO_SUBJECTS.map(normalize);
const BOUNCE_SUBJECT_FORMS = BOUNCE_SUBJECTS.map(normalize);

/** `Re:`/`AW:`/`Fwd:`... in front of a vendor prefix: a person answering an auto-reply is still a person. */
const REPLY_PREFIX = /^(re|aw|sv|vs|antw|wg|fw|fwd|tr|rv|r|ris|odp|ynt)\s*:/;

function subjectPrefix(subject: string, forms: readonly string[]): boolean {
  const s = normalize(subject);
  if (REPLY_PREFIX.test(s)) return false;
  // A prefix must end at a word boundary ("Absence" must not match "Absenteeism").
  return forms.some(
    (p) =>
      s.startsWith(p) &&
      (s.length === p.length || !/[\p{L}\p{N}]/u.test(s[p.length]!) || !/[\p{L}\p{N}]/u.test(p.at(-1)!)),
  );
}

/** The first signal that marks `mail` as automatic, or `undefined` for mail a person wrote. */
export function automaticMail(mail: MailSignals): Automatic | undefined {
  const h = mail.headers;
  const autoSubmitted = first(h, 'auto-submitted');
  if (autoSubmitted !== undefined && autoSubmitted.split(/[;\s]/)[0] !== 'no')
    return { reason: 'auto_submitted', detail: `Auto-Submitted: ${autoSubmitted.split(/[;\s]/)[0]}` };
  for (const name of ['x-autoreply', 'x-autorespond', 'x-autoresponder', 'x-autogenerated'])
    if (has(h, name)) return { reason: 'auto_submitted', detail: `${name} present` };
  const suppress = first(h, 'x-auto-response-suppress')
    ?.split(/[\s,]+/)
    .filter((v) => SUPPRESSES_AUTO_REPLY.has(v));
  if (suppress?.length) return { reason: 'auto_submitted', detail: `X-Auto-Response-Suppress: ${suppress.join(', ')}` };

  const precedence = first(h, 'precedence');
  if (precedence && PRECEDENCE_AUTO.has(precedence))
    return { reason: 'auto_submitted', detail: `Precedence: ${precedence}` };
  if (precedence && PRECEDENCE_BULK.has(precedence))
    return { reason: 'bulk_precedence', detail: `Precedence: ${precedence}` };
  for (const name of ['list-id', 'list-unsubscribe', 'list-post'])
    if (has(h, name)) return { reason: 'mailing_list', detail: `${name} present` };

  const contentType = first(h, 'content-type') ?? '';
  if (/^(multipart\/report|message\/delivery-status|message\/disposition-notification)\b/.test(contentType))
    return { reason: 'bounce', detail: `Content-Type: ${contentType.split(';')[0]}` };
  const returnPath = h.find((x) => x.key === 'return-path')?.value;
  if (returnPath !== undefined && /^\s*<?\s*>?\s*$/.test(returnPath.slice(0, HEAD)))
    return { reason: 'empty_return_path', detail: 'empty Return-Path (a bounce or notification)' };
  const returnPathAddress =
    /<([^<>\s]*)>/.exec(returnPath?.slice(0, HEAD) ?? '')?.[1] ?? returnPath?.slice(0, HEAD).trim();
  const senders = [...mail.from, ...(returnPathAddress ? [returnPathAddress.toLowerCase()] : [])];
  if (senders.some((a) => DAEMON_LOCAL_PARTS.has(localPart(a))))
    return { reason: 'bounce', detail: 'sent by a mailer daemon or postmaster' };
  if (subjectPrefix(mail.subject, BOUNCE_SUBJECT_FORMS))
    return { reason: 'bounce', detail: 'subject of a delivery failure notice' };
  if (subjectPrefix(mail.subject, AUTO_SUBJECT_FORMS))
    return { reason: 'auto_submitted', detail: 'subject of an automatic reply' };
  return undefined;
}
