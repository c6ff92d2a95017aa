/**
 * What an outgoing text commits to, found deterministically: links, email addresses, phone
 * numbers and money amounts. The guard checks these against allow-lists and the turn pipeline's
 * enforcement lane reads them as the variables extracted from the response (its third extraction
 * stage). Pure functions: no model, no I/O.
 *
 * Everything is read from `normalizeForChecks(text)`, so a fullwidth `＠`, a non-ASCII hyphen, a
 * zero-width character or Arabic-Indic digits do not hide a fact. Links and addresses are found by
 * linkify-it (with the IANA top-level domains of `tlds`). Phone numbers are runs of digit groups:
 * libphonenumber-js finds valid numbers only and would add 144 KB to every step bundle (over the
 * 500 KB budget); for an allow-list check any run of 7 to 15 digits written like a number is a
 * number, valid or not, and so is a North American number in letters (`1-800-FLOWERS`).
 */
import { LinkifyIt } from 'linkify-it';
import tlds from 'tlds' with { type: 'json' };

/** The facts of one text. Lists keep the order of appearance, without duplicates. */
export interface ResponseFacts {
  /**
   * Host names of links, lower-case, without `www.`: `https://evil.example/x`, `www.evil.example`
   * and bare `evil.com` all give the host. An internationalized domain is given in its ASCII
   * (punycode) form, an IP literal as the URL standard writes it (`192.168.0.1`, `[2001:db8::1]`).
   */
  links: string[];
  emails: string[];
  /**
   * Phone numbers as digits only (a leading `+` kept), as written: `+1 (800) 555-0100` → `+18005550100`, `+44 (0) 20
   * 7946 0958` → `+4402079460958`.
   */
  phones: string[];
  /**
   * Money amounts in order of appearance (`$75`, `75.50 EUR`, `€ 20`, `EUR 500`, `500$`, `1.500,00 €`, `five hundred
   * dollars`).
   */
  amounts: number[];
  /** The largest amount, 0 when there is none (so `max_amount <= 50` needs no `has()`). */
  max_amount: number;
}

/**
 * The numeric value of a decimal digit of any script: Unicode encodes each script's digits 0 to 9 in a contiguous run.
 */
function asciiDigit(digit: string): string {
  const cp = digit.codePointAt(0)!;
  let zero = cp;
  while (/\p{Nd}/u.test(String.fromCodePoint(zero - 1))) zero--;
  return String((cp - zero) % 10);
}

/**
 * The text as the deterministic checks read it: NFKC (fullwidth and compatibility forms become
 * plain: `＠` → `@`, `ＴＫＴ` → `TKT`), invisible format characters (zero-width, bidi controls)
 * removed, every dash and the minus sign a hyphen-minus, ideographic full stops a dot (they
 * separate domain labels like one), every space a plain space, every decimal digit ASCII, and
 * `[at]`, `(dot)`, `{at}`, `<dot>` (any case, spaces around) the `@` or `.` they stand for.
 * Only for checking: the text that is sent is not changed.
 */
export function normalizeForChecks(text: string): string {
  return text
    .normalize('NFKC')
    .replace(/\p{Cf}/gu, '')
    .replace(/[\p{Pd}\u2212]/gu, '-')
    .replace(/[\u3002\uff61]/gu, '.')
    .replace(/\p{Zs}/gu, ' ')
    .replace(/[^\x00-\x7f]/gu, (c) => (/\p{Nd}/u.test(c) ? asciiDigit(c) : c))
    .replace(/ *[[({<] *(at|dot) *[\])}>] */giu, (_, word: string) => (word.toLowerCase() === 'at' ? '@' : '.'));
}

// Special-use names (RFC 6761, 6762, 7686, 9476, and ICANN's `internal`) are in no IANA list but are
// hosts all the same: `.onion` is reachable through Tor, the others inside a network.
const SPECIAL_USE = ['example', 'test', 'invalid', 'localhost', 'local', 'onion', 'alt', 'internal'];
const linkify = new LinkifyIt({ fuzzyLink: true, fuzzyEmail: true, fuzzyIP: true }).tlds(
  [...tlds, ...SPECIAL_USE],
  true,
);
// `www.` names a host whatever its top-level domain (linkify-it's fuzzy links need a known one).
const WWW_HOST = /(?<![\p{L}\p{N}.@-])www\.((?:[\p{L}\p{N}-]+\.)+[\p{L}\p{N}-]{2,})/giu;
// A phone number: an optional +, groups of digits (some in parentheses) joined by spaces, dots, dashes or slashes; 7 to
// 15 digits in all.
const PHONE = /(?<![\w+-])(\+?\(?\d{1,4}\)?(?:[ ./-]{0,2}\(?\d{1,4}\)?){1,7})(?![\w-])/g;
const ISO_DATE = /^\d{4}-\d{2}-\d{2}$/;
// A number in letters (`1-800-FLOWERS`, `800-GO-FEDEX`, `(800) CALL-NOW`): a North American area code written
// apart (a dash or dot after it, or in parentheses), then groups of capitals and digits with two letters or more.
// A capitalised word after a bare number and a space (`Room 212 RECEPTION`) is not read as one.
const VANITY =
  /(?<![\w+-])(?:\+?1[ .-]?)?(?:\([2-9]\d{2}\) ?|[2-9]\d{2}[.-])(?=[A-Z\d-]*[A-Z][A-Z\d-]*[A-Z])[A-Z\d]+(?:-[A-Z\d]+)*(?![\w-])/g;
const KEYPAD = ['ABC', 'DEF', 'GHI', 'JKL', 'MNO', 'PQRS', 'TUV', 'WXYZ'];
const keypadDigit = (letter: string) => String(KEYPAD.findIndex((keys) => keys.includes(letter)) + 2);

// ISO 4217 codes that are also English words in capitals (`ALL 3 devices`) are left out.
const WORD_CODES = new Set(['ALL', 'BOB', 'CUP', 'MAD', 'MOP', 'PEN', 'SOS', 'TOP', 'TRY']);
// Any other ISO 4217 code in capitals (`EUR 500`, `500 CHF`), the common ones in any case, currency words, and every
// currency symbol (`\p{Sc}`).
// A code and number inside an id (`TKT-HRK039RS0Y9J`, `TKT-EUR1234`) are not an amount: one is whole words only.
const CODES = `${Intl.supportedValuesOf('currency')
  .filter((c) => !WORD_CODES.has(c))
  .join('|')}|[Uu][Ss][Dd]|[Ee][Uu][Rr]|[Gg][Bb][Pp]`;
const WORDS = '[Dd]ollars?|[Ee]uros?|[Pp]ounds?|[Ff]rancs?|[Yy]en|[Bb]ucks';
// 1,500.00 / 1.500,00 / 1 500 / 1'500 / 75.5 / 500
const NUMBER = String.raw`(\d{1,3}(?:[,.' ]\d{3})+(?:[.,]\d{1,2})?|\d+(?:[.,]\d{1,2})?)`;
const AMOUNT = new RegExp(
  String.raw`(?<![\p{L}\p{N}]|[\p{L}\p{N}]-)(?:\p{Sc}|${CODES})\s?${NUMBER}(?![\p{L}\p{N}])|(?<![\p{L}\p{N}.,])${NUMBER}\s?(?:\p{Sc}|(?:${CODES}|${WORDS})(?![\p{L}\p{N}]))`,
  'gu',
);

// An amount in words (`five hundred dollars`, `a thousand euros`, `twenty-five bucks`): number words, then a currency
// word or code. Fractions and `half a million` are not read.
const SMALL =
  'zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen'.split(
    ' ',
  );
const TENS = 'twenty thirty forty fifty sixty seventy eighty ninety'.split(' ');
const SCALES: Record<string, number> = { thousand: 1e3, million: 1e6, billion: 1e9 };
const NUMBER_WORD = [...SMALL, ...TENS, 'hundred', ...Object.keys(SCALES)].join('|');
const WORD_AMOUNT = new RegExp(
  String.raw`(?<![\p{L}\p{N}])((?:a\s+(?=hundred|thousand|million|billion))?(?:${NUMBER_WORD})(?:(?:\s+and\s+|\s+|-)(?:${NUMBER_WORD}))*)\s+(\p{L}+)(?![\p{L}\p{N}])`,
  'giu',
);
const CURRENCY_WORD = new RegExp(`^(?:${CODES}|${WORDS})$`, 'u');

/** `five hundred` → 500, `a thousand` → 1000, `twenty-five` → 25, `two million three hundred thousand` → 2300000. */
function wordsValue(written: string): number {
  let total = 0;
  let current = 0;
  for (const word of written.toLowerCase().split(/[\s-]+/)) {
    if (word === 'hundred') current = (current || 1) * 100;
    else if (word in SCALES) {
      total += (current || 1) * SCALES[word]!;
      current = 0;
    } else if (SMALL.includes(word)) current += SMALL.indexOf(word);
    else if (TENS.includes(word)) current += (TENS.indexOf(word) + 2) * 10;
  }
  return total + current;
}

/** `1.500,00` → 1500, `1,500.5` → 1500.5, `75.50` → 75.5: the last separator is the decimal one when one or two digits follow it. */
function amountValue(written: string): number {
  const decimals = /[.,](\d{1,2})$/.exec(written);
  const whole = (decimals ? written.slice(0, decimals.index) : written).replace(/\D/g, '');
  return Number(`${whole}.${decimals?.[1] ?? '0'}`);
}

/** The host of a URL linkify-it found, as the URL standard reads it (punycode, canonical IPs), lower-case, without `www.`. */
function hostOf(url: string, text: string): string {
  let host: string;
  try {
    host = new URL(url.startsWith('//') ? `http:${url}` : url).hostname;
  } catch {
    // Unparseable for the URL standard: the written host, still a host to check.
    host = text.replace(/^[a-z][a-z0-9+.-]*:\/\//i, '').split(/[/?#:]/)[0]!;
  }
  return host.toLowerCase().replace(/^www\./, '');
}

/** The values in order of where they were found, without duplicates. */
const inOrder = (found: Array<[at: number, value: string]>): string[] => [
  ...new Set(found.sort(([a], [b]) => a - b).map(([, v]) => v)),
];

/** The host names, email addresses, phone numbers and amounts in `text` (read from `normalizeForChecks(text)`). */
export function responseFacts(text: string): ResponseFacts {
  const normalized = normalizeForChecks(text);
  const found = linkify.match(normalized) ?? [];
  const emails = inOrder(
    found.filter((m) => m.schema === 'mailto:').map((m) => [m.index, m.url.replace(/^mailto:/i, '').toLowerCase()]),
  );
  const links = inOrder([
    ...found.filter((m) => m.schema !== 'mailto:').map((m): [number, string] => [m.index, hostOf(m.url, m.text)]),
    ...[...normalized.matchAll(WWW_HOST)].map((m): [number, string] => [m.index, hostOf(`http://${m[1]}`, m[1]!)]),
  ]);
  // Phone numbers and amounts are not read inside links and addresses.
  let rest = normalized;
  for (const m of found) rest = rest.slice(0, m.index) + ' '.repeat(m.lastIndex - m.index) + rest.slice(m.lastIndex);
  // A number in letters is read as the digits a keypad gives (one digit per letter: the positions stay).
  rest = rest.replace(VANITY, (m) => m.replace(/[A-Z]/g, keypadDigit));
  const phones = inOrder(
    [...rest.matchAll(PHONE)]
      .filter((m) => !ISO_DATE.test(m[1]!.trim()))
      .map((m): [number, string] => [m.index, phoneDigits(m[1]!)])
      .filter(([, digits]) => digits.replace('+', '').length >= 7 && digits.replace('+', '').length <= 15),
  );
  const amounts = [
    ...[...rest.matchAll(AMOUNT)].map((m): [number, number] => [m.index, amountValue((m[1] ?? m[2])!)]),
    ...[...rest.matchAll(WORD_AMOUNT)]
      .filter((m) => CURRENCY_WORD.test(m[2]!))
      .map((m): [number, number] => [m.index, wordsValue(m[1]!)]),
  ]
    .sort(([a], [b]) => a - b)
    .map(([, value]) => value);
  return { links, emails, phones, amounts, max_amount: amounts.length ? Math.max(...amounts) : 0 };
}

/** An allow-listed domain as `responseFacts` reports link hosts (an internationalized one in punycode). */
export const linkHost = (domain: string): string => hostOf(`http://${domain.trim()}`, domain);

/** A phone number as `responseFacts` reports it, for comparing allow-list entries. */
export const phoneDigits = (phone: string): string =>
  (phone.trim().startsWith('+') ? '+' : '') + phone.replace(/\D/g, '');
