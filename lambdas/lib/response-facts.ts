/**
 * What an outgoing text commits to, found deterministically: links, email addresses, phone
 * numbers and money amounts. The guard checks these against allow-lists and the turn pipeline's
 * enforcement lane reads them as the variables extracted from the response (seed 003, decision 7:
 * the third extraction stage). Pure functions: no model, no I/O.
 */

/** The facts of one text. Lists keep the order of appearance, without duplicates. */
export interface ResponseFacts {
  /** Host names of links: `https://evil.example/x`, `www.evil.example` and bare `evil.com` all give the host. */
  links: string[];
  emails: string[];
  /** Phone numbers as digits only (a leading `+` kept): `+1 (800) 555-0100` → `+18005550100`. */
  phones: string[];
  /** Money amounts in order of appearance (`$75`, `75.50 EUR`, `€ 20`). */
  amounts: number[];
  /** The largest amount, 0 when there is none (so `max_amount <= 50` needs no `has()`). */
  max_amount: number;
}

const URL = /\b(?:https?:\/\/|www\.)([a-z0-9.-]+\.[a-z]{2,})(?::\d+)?[^\s<>"')]*/gi;
const EMAIL = /\b[a-z0-9._%+-]+@([a-z0-9-]+\.)+[a-z]{2,}\b/gi;
// A bare domain: a dotted name ending in a common top-level domain (not `e.g.` or a file name).
const BARE_DOMAIN = /(?<![@\w.-])((?:[a-z0-9-]+\.)+(?:com|net|org|io|co|info|biz|xyz|ru|cn|me|ly|app|dev|shop|store|online|site|support|help|link|click|top|de|uk|fr|eu|us))\b(?![.-]\w)/gi;
// A phone number: optional +country, groups of digits with separators; 7 to 15 digits in all.
const PHONE = /(?<![\w+-])(\+?\(?\d{1,4}\)?(?:[ .-]?\(?\d{2,4}\)?){1,5})(?![\w-])/g;
const ISO_DATE = /^\d{4}-\d{2}-\d{2}$/;
const AMOUNT = /(?:([$€£])\s?(\d{1,3}(?:,\d{3})*(?:\.\d{1,2})?|\d+(?:\.\d{1,2})?))|(?:\b(\d+(?:\.\d{1,2})?)\s?(?:USD|EUR|GBP|dollars?|euros?|pounds?)\b)/gi;

const unique = <T>(items: T[]): T[] => [...new Set(items)];

/** The host names, email addresses, phone numbers and amounts in `text`. */
export function responseFacts(text: string): ResponseFacts {
  const emails = unique([...text.matchAll(EMAIL)].map((m) => m[0].toLowerCase()));
  const withoutEmails = text.replace(EMAIL, ' ');
  const urlHosts = [...withoutEmails.matchAll(URL)].map((m) => m[1]!.toLowerCase());
  const bare = [...withoutEmails.replace(URL, ' ').matchAll(BARE_DOMAIN)].map((m) => m[1]!.toLowerCase());
  const links = unique([...urlHosts, ...bare].map((h) => h.replace(/^www\./, '')));
  const phones = unique(
    [...withoutEmails.replace(URL, ' ').matchAll(PHONE)]
      .map((m) => m[1]!.trim())
      .filter((raw) => !ISO_DATE.test(raw))
      .map((raw) => (raw.startsWith('+') ? '+' : '') + raw.replace(/\D/g, ''))
      .filter((digits) => digits.replace('+', '').length >= 7 && digits.replace('+', '').length <= 15),
  );
  const amounts = [...text.matchAll(AMOUNT)].map((m) => Number((m[2] ?? m[3])!.replaceAll(',', '')));
  return { links, emails, phones, amounts, max_amount: amounts.length ? Math.max(...amounts) : 0 };
}

/** A phone number as `responseFacts` reports it, for comparing allow-list entries. */
export const phoneDigits = (phone: string): string => (phone.trim().startsWith('+') ? '+' : '') + phone.replace(/\D/g, '');
