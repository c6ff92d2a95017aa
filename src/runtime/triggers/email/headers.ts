/**
 * Header values that come from an inbound mail and go into an outgoing one (the reply Subject,
 * In-Reply-To, References). Whatever the sender wrote, what leaves is one line of plain text or
 * one syntactically valid message id, never a second header.
 */

/** Longest reply subject; RFC 5322 recommends lines of at most 78 characters, SES accepts more. */
export const MAX_SUBJECT_CHARS = 200;

// C0/C1 controls (CR, LF, NUL, ...), Unicode line/paragraph separators, and the invisible format
// characters used to disguise text (zero-width, bidi overrides and isolates, BOM).
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]+/g;
// An RFC 2047 encoded word left over after decoding was encoded twice: a client would decode it
// again and show text we never checked. Breaking the `=?` opener makes it inert, visible text.
const ENCODED_WORD_OPENER = /=\?/g;

/**
 * One line of display text for a header: unsafe characters become spaces, leftover encoded-word
 * openers are broken, whitespace is collapsed, and the result is cut to `max` characters.
 *
 * @example
 * headerText('Hello\r\nBcc: all@example.com') // 'Hello Bcc: all@example.com' (text, not a header)
 */
export function headerText(value: string, max = MAX_SUBJECT_CHARS): string {
  const line = value
    .normalize('NFC')
    .replace(UNSAFE, ' ')
    .replace(ENCODED_WORD_OPENER, '= ?')
    .replace(/\s+/g, ' ')
    .trim();
  return line.length > max ? `${line.slice(0, max - 1).trimEnd()}…` : line;
}

// RFC 5322 msg-id `<id-left@id-right>`: printable ASCII, no whitespace, no `<`/`>`, one `@` (which
// also keeps the pattern free of backtracking).
const MSG_ID = /^<[\x21-\x3b\x3d\x3f\x41-\x7e]{1,500}@[\x21-\x3b\x3d\x3f\x41-\x7e]{1,400}>$/;

/**
 * The first message id of a Message-ID/In-Reply-To value, or `''` when there is none that is
 * valid. Only a valid id may be copied into In-Reply-To/References.
 *
 * @example
 * messageIdOf(' <a1@mail.example> ') // '<a1@mail.example>'
 * messageIdOf('<a@b>\r\nBcc: x@y')   // '<a@b>'
 * messageIdOf('no id here')           // ''
 */
export function messageIdOf(value: string | undefined): string {
  const candidate = /<[^<>]*>/.exec((value ?? '').slice(0, 2000))?.[0] ?? '';
  return MSG_ID.test(candidate) ? candidate : '';
}

/** Most message ids read from one In-Reply-To/References value: a long thread names its root first, then the latest. */
const MAX_REFERENCED_IDS = 20;

/**
 * The valid message ids of an In-Reply-To/References value, in order, at most 20 (the first ten
 * and the last ten of a longer list: a thread's root and the mails just before).
 *
 * @example
 * messageIdsIn('<a@x> <b@y>\r\n <not an id> <c@z>') // ['<a@x>', '<b@y>', '<c@z>']
 */
export function messageIdsIn(value: string | undefined): string[] {
  const ids = ((value ?? '').slice(0, 20_000).match(/<[^<>]*>/g) ?? []).filter((id) => messageIdOf(id) === id);
  return ids.length > MAX_REFERENCED_IDS
    ? [...ids.slice(0, MAX_REFERENCED_IDS / 2), ...ids.slice(-MAX_REFERENCED_IDS / 2)]
    : ids;
}
