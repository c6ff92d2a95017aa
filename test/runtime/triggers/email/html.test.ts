import { describe, expect, it } from 'vitest';
import { DEFAULT_POLICY, isRejection, parseInbound } from '../../../../src/runtime/triggers/email/checks.ts';
import { htmlToText } from '../../../../src/runtime/triggers/email/html.ts';
import { HOSTILE_HTML } from './hostile-html.ts';

describe('htmlToText', () => {
  it('keeps paragraphs, list items and line breaks, and drops link targets and head content', () => {
    expect(
      htmlToText(
        '<html><head><title>Offer</title><style>p{}</style></head><body><h1>Request</h1><p>Case <a href="https://evil.example">C-10001</a></p><ul><li>one</li><li>two</li></ul>Line<br>break</body></html>',
      ),
    ).toBe('Request\nCase C-10001\none\ntwo\nLine\nbreak');
  });

  it('reads a body that follows an unclosed <head>', () => {
    expect(htmlToText('<head><meta charset="utf-8"><body><p>Hello</p>')).toBe('Hello');
  });

  it('converts only the first maxChars characters and says so', () => {
    expect(htmlToText('<p>abcdef</p>', { maxChars: 6 })).toBe(
      'abc\n\n[HTML truncated: converted the first 6 of 13 characters]',
    );
  });
});

describe('parseInbound on hostile HTML', () => {
  // A plain part beside an HTML part: the shape in which postal-mime converts the HTML itself.
  const mixed = (html: string) =>
    `From: a@example.org\r\nTo: b@example.org\r\nSubject: x\r\nMessage-ID: <1@example.org>\r\nContent-Type: multipart/mixed; boundary=XX\r\n\r\n--XX\r\nContent-Type: text/plain\r\n\r\nhello\r\n--XX\r\nContent-Type: text/html\r\n\r\n${html}\r\n--XX--\r\n`;
  const htmlOnly = (html: string) =>
    `From: a@example.org\r\nTo: b@example.org\r\nSubject: x\r\nContent-Type: text/html\r\n\r\n${html}\r\n`;
  const policy = { ...DEFAULT_POLICY, maxHtmlChars: Infinity };

  // Linear growth on every hostile shape is measured by the bench (`npm run bench:html`), never with timers in a test.
  it.each(HOSTILE_HTML)('converts %s in both shapes without refusing or throwing', async (_name, unit) => {
    for (const shape of [htmlOnly, mixed]) {
      const result = await parseInbound(shape(unit.repeat(2_000)), policy);
      expect(isRejection(result) ? result.rejected : 'parsed').toBe('parsed');
    }
  });

  it('reads the text of both parts of a mixed mail, HTML converted by htmlToText', async () => {
    const result = await parseInbound(mixed('<p>Case <b>C-10001</b></p><script>alert(1)</script>'), DEFAULT_POLICY);
    if (isRejection(result)) throw new Error(result.rejected);
    expect(result.text).toBe('hello\n\nCase C-10001');
  });

  it('caps the HTML converted per part at maxHtmlChars', async () => {
    const result = await parseInbound(htmlOnly(`<p>${'x'.repeat(5000)}</p>`), {
      ...DEFAULT_POLICY,
      maxHtmlChars: 1000,
    });
    if (isRejection(result)) throw new Error(result.rejected);
    expect(result.text).toMatch(/^x{997}\n\n\[HTML truncated: converted the first 1000 of 50\d\d characters\]$/);
  });
});
