/**
 * Generated MIME bombs (and one large legitimate mail to compare with): messages whose parsing
 * cost grows with their structure, not their size. Shared by the ingress tests and the bench.
 */

const HEAD = [
  'From: Nora Kent <nora.kent@example.org>',
  'To: cases@dev.desk.example.com',
  'Subject: Desk lamp broken again - C-10001',
  'Message-ID: <bomb@mail.example.org>',
  'MIME-Version: 1.0',
].join('\r\n');

const fill = (unit: string, bytes: number) => unit.repeat(Math.floor(bytes / unit.length));

/** What each bomb is made of, filled to about `bytes`. */
export const MIME_BOMBS: Record<string, (bytes: number) => string> = {
  /** Empty parts of one multipart: every `--b` line is a part for the parser. */
  'empty parts': (bytes) =>
    `${HEAD}\r\nContent-Type: multipart/mixed; boundary="b"\r\n\r\n${fill('--b\r\n\r\n', bytes)}--b--\r\n`,
  /** A multipart in a multipart in a multipart ... */
  'deep nesting': (bytes) => {
    const levels: string[] = [];
    for (let size = 0; size < bytes; size += levels.at(-1)!.length)
      levels.push(`Content-Type: multipart/mixed; boundary="n${levels.length}"\r\n\r\n--n${levels.length}\r\n`);
    return `${HEAD}\r\n${levels.join('')}\r\nhello\r\n`;
  },
  /** One header field per line. */
  'header flood': (bytes) => `${HEAD}\r\n${fill('X-H: v\r\n', bytes)}\r\nhello\r\n`,
  /** A plain-text body of one-character lines. */
  'short lines': (bytes) => `${HEAD}\r\nContent-Type: text/plain\r\n\r\n${fill('a\r\n', bytes)}`,
};

/** A legitimate large mail: a short text and a base64 attachment of about `bytes`, in 76-character lines. */
export function largeAttachment(bytes: number): string {
  return [
    `${HEAD}\r\nContent-Type: multipart/mixed; boundary="part"\r\n`,
    '--part\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nThe invoice and photos are attached. Case C-10001.\r\n',
    '--part\r\nContent-Type: application/pdf\r\nContent-Transfer-Encoding: base64\r\nContent-Disposition: attachment; filename="invoice.pdf"\r\n',
    fill('QUJDRA=='.slice(0, 4).repeat(19) + '\r\n', bytes),
    '--part--\r\n',
  ].join('\r\n');
}
