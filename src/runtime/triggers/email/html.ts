/**
 * HTML to plain text for the model, in linear time.
 *
 * Built on htmlparser2's `Tokenizer` (a single-pass state machine), not its `Parser`: the Parser
 * keeps open elements with `Array.unshift`, so deeply nested markup (`<b>x` repeated) costs
 * O(depth) per tag, quadratic in the input. The tokenizer keeps no element stack at all; this
 * module only tracks whether it is inside a raw-text element whose content is not for reading.
 */
import { Tokenizer } from 'htmlparser2';

/** Elements whose text is code or metadata, never message text. */
const SKIPPED = new Set(['script', 'style', 'title', 'template', 'noscript', 'head']);
/** Elements that start a new line in a rendered page. */
const BLOCK = new Set([
  'address',
  'article',
  'aside',
  'blockquote',
  'br',
  'dd',
  'div',
  'dl',
  'dt',
  'figure',
  'footer',
  'form',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'header',
  'hr',
  'li',
  'main',
  'nav',
  'ol',
  'p',
  'pre',
  'section',
  'table',
  'tr',
  'ul',
]);

export interface HtmlToTextOptions {
  /** HTML characters converted; the rest is dropped and a note says so. @default 1 000 000 */
  maxChars?: number;
}

export const DEFAULT_MAX_HTML_CHARS = 1_000_000;

/**
 * Plain text from HTML: enough for the model to read, not a renderer. Tags are dropped (links
 * keep their text, never their target), block elements become line breaks, entities are
 * decoded, and script/style/head content is skipped. Work is linear in `min(html.length, maxChars)`.
 */
export function htmlToText(html: string, { maxChars = DEFAULT_MAX_HTML_CHARS }: HtmlToTextOptions = {}): string {
  const input = html.length > maxChars ? html.slice(0, maxChars) : html;
  const out: string[] = [];
  let tag = '';
  // Depth inside skipped elements; an unclosed <head> is closed by <body> as browsers do.
  let skipping = 0;
  // A block boundary is one line break, however many boundaries meet; <br> always breaks.
  const block = (name: string) => {
    if (name === 'br' || !out.at(-1)?.endsWith('\n')) out.push('\n');
  };
  const open = (name: string) => {
    if (name === 'body') skipping = 0;
    else if (SKIPPED.has(name)) skipping++;
    else if (BLOCK.has(name)) block(name);
  };
  const tokenizer = new Tokenizer(
    { xmlMode: false, decodeEntities: true },
    {
      ontext: (start, end) => {
        if (!skipping) out.push(input.slice(start, end));
      },
      ontextentity: (codepoint) => {
        if (!skipping) out.push(String.fromCodePoint(codepoint));
      },
      onopentagname: (start, end) => {
        tag = input.slice(start, end).toLowerCase();
        open(tag);
      },
      onclosetag: (start, end) => {
        const name = input.slice(start, end).toLowerCase();
        if (SKIPPED.has(name)) skipping = Math.max(0, skipping - 1);
        else if (BLOCK.has(name) && name !== 'br') block(name);
      },
      onselfclosingtag: () => {
        if (SKIPPED.has(tag)) skipping = Math.max(0, skipping - 1);
      },
      oncdata: () => {},
      oncomment: () => {},
      ondeclaration: () => {},
      onprocessinginstruction: () => {},
      onattribdata: () => {},
      onattribentity: () => {},
      onattribend: () => {},
      onattribname: () => {},
      onopentagend: () => {},
      onend: () => {},
    },
  );
  tokenizer.write(input);
  tokenizer.end();
  const text = normalizeWhitespace(out.join(''));
  return input === html
    ? text
    : `${text}\n\n[HTML truncated: converted the first ${maxChars} of ${html.length} characters]`;
}

/**
 * Collapse runs of spaces and blank lines. Each pattern is a single character class or a fixed
 * sequence, so none can backtrack (a `\n\s*\n` pattern would, on long whitespace runs).
 */
function normalizeWhitespace(text: string): string {
  return text
    .replace(/[ \t\f\v\r\u00a0]+/g, ' ')
    .replace(/ ?\n ?/g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}
