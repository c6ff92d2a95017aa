import { defineFastPath } from 'stepwise';
import { normalizeSerial } from '../registry.ts';

/** A serial as customers write it: "SN12345", "sn 12345", "SN-12345" (5 to 8 digits). */
const WRITTEN_SERIAL = /\bSN[\s-]?(\d{5,8})\b/gi;
/** Digits glued to a serial-like prefix or a longer digit run: not a clean serial, let the model read it. */
const MALFORMED_SERIAL = /\bSN[\s-]?\d{1,4}\b|\bSN[\s-]?\d{9,}\b/i;

const words = (list: string[]) =>
  new RegExp(
    `\\b(?:${list.map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/'/g, "['\u2019]")).join('|')})\\b`,
    'gi',
  );

/** A device fault or a warranty request: what makes an email a claim. */
const CLAIM = words([
  'broken',
  'broke',
  'not working',
  'stopped working',
  "doesn't work",
  'does not work',
  "won't turn on",
  'will not turn on',
  "won't charge",
  'not charging',
  'stopped charging',
  'no power',
  'dead',
  'defect',
  'defective',
  'faulty',
  'malfunction',
  'malfunctioning',
  'damaged',
  'cracked',
  'overheating',
  'repair',
  'keeps crashing',
  'keeps restarting',
  'flickering',
  'warranty',
  'guarantee',
  'RMA',
  'replacement',
  'replaced',
]);
/** Anything besides a claim (sales, billing, accounts...): the model decides whether it is one. */
const OTHER_BUSINESS = words([
  'invoice',
  'billing',
  'payment',
  'price',
  'pricing',
  'quote',
  'discount',
  'order status',
  'tracking number',
  'partnership',
  'sponsorship',
  'job',
  'career',
  'vacancy',
  'unsubscribe',
  'newsletter',
  'webinar',
  'password',
  'extended warranty',
  'buy',
  'purchase',
  'refund',
  'order number',
]);
/** A "short email": a claim this short with no serial has nothing more for the model to read. */
export const SHORT_EMAIL_WORDS = 80;
/** A run of digits could be a serial written without its prefix, or an order number: the model tells. */
const DIGIT_RUN = /\d{4,}/;

/** Text that tries to steer the workflow: always the model (with its injection rules), never a shortcut. */
const STEERING = /NEXT_STEP|\broute\b|\bsystem\b|\binstruction|\bignore\b|\bassistant\b|\bprompt\b/i;

/**
 * Step 01's fast path (heuristic routing, the model for ambiguous cases). It decides only
 * two clear cases, each a fault or warranty request with nothing else asked for and no text
 * addressed to the workflow: exactly one well-formed serial number routes to the warranty check;
 * a short email (at most SHORT_EMAIL_WORDS words) with no serial and no digit run that could be one
 * routes to 03d, which asks for it (and still writes its reply with the model). Any other email
 * (several serials, a longer one without, other business, instructions in the mail) is left to the
 * model.
 */
export default defineFastPath(({ untrusted }) => {
  const email = (untrusted?.email ?? {}) as { subject?: unknown; body?: unknown };
  const text = `${typeof email.subject === 'string' ? email.subject : ''}\n${typeof email.body === 'string' ? email.body : ''}`;
  const serials = new Set([...text.matchAll(WRITTEN_SERIAL)].map((m) => normalizeSerial(`SN${m[1]}`)));
  if (serials.size > 1 || MALFORMED_SERIAL.test(text) || STEERING.test(text) || OTHER_BUSINESS.test(text)) return null;
  const claim = [...new Set([...text.matchAll(CLAIM)].map((m) => m[0].toLowerCase()))];
  if (!claim.length) return null;
  // Only the matched keywords: no text copied from the email, so no personal data.
  const issueSummary = `Customer reports: ${claim.join(', ')}.`;
  if (serials.size === 0) {
    const words = text.split(/\s+/).filter(Boolean).length;
    if (words > SHORT_EMAIL_WORDS || DIGIT_RUN.test(text)) return null;
    return {
      next: '03d-request-serial',
      reason: `a short warranty claim (${words} words) with no serial number`,
      fields: { issueSummary },
    };
  }
  return {
    next: '02-check-warranty',
    reason: 'one serial number and a warranty claim, nothing else asked',
    fields: {
      serialNumber: [...serials][0]!,
      issueSummary,
    },
  };
});
