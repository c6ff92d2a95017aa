/**
 * `{{placeholder}}` templates for replies and offline-model rules, rendered from a step's context.
 *
 * A placeholder is a dotted path into the scope, optionally piped through filters:
 * `{{data.serialNumber}}`, `{{found.serial | upper}}`, `{{email.fromName | default: there}}`.
 * Filters: `upper`, `lower`, `json`, `default: <text>` (used when the value is missing or empty).
 * A template that is exactly one placeholder yields the raw value (an object stays an object).
 *
 * Values under an `untrusted` path (text a stranger wrote: a sender's display name, a subject) are
 * rendered only when they are plain words (`inertText`); anything that could be read or
 * auto-linked as a link, an address or a phone number is omitted, so `default:` applies.
 */

const PLACEHOLDER = /\{\{\s*([^{}]+?)\s*\}\}/g;
const SINGLE = /^\{\{\s*([^{}]+?)\s*\}\}$/;
const FILTERS = new Set(['upper', 'lower', 'json', 'default']);

export interface RenderOptions {
  /**
   * Path prefixes whose values come from outside (`['email']`): rendered only when `inertText` accepts them.
   * @default []
   */
  untrusted?: readonly string[];
}

// Letters, combining marks, spaces, apostrophes, hyphens and dots: a person's name. No digits
// (phone numbers), no `@ : / < >` (addresses, links, markup).
const PLAIN_WORDS = /^[\p{L}\p{M} '\u2019.-]{1,64}$/u;
// A dot inside a word is how "evil.example" and "www.x.io" look; in a name a dot ends an initial.
const DOT_IN_WORD = /\.[^\s]/;

/**
 * `text` when it is plain words a mail client cannot turn into a link, an address or a phone
 * number, otherwise `undefined`.
 *
 * @example
 * inertText('María-José O’Neil') // 'María-José O’Neil'
 * inertText('Maria (visit evil.example)') // undefined
 * inertText('Call +1 555 0100') // undefined
 */
export function inertText(text: string): string | undefined {
  const t = text.normalize('NFKC').replace(/\s+/g, ' ').trim();
  return PLAIN_WORDS.test(t) && !DOT_IN_WORD.test(t) && !/\bwww\b/i.test(t) ? t : undefined;
}

export interface Rendered {
  value: unknown;
  /**
   * Placeholders without a value (and no `default` filter) or with an unknown filter; the caller decides whether that
   * is fatal.
   */
  problems: string[];
}

/** The scope paths a template reads (`data.serialNumber` of `{{data.serialNumber | upper}}`), in every string inside it. */
export function templatePaths(template: unknown): string[] {
  if (typeof template === 'string') return [...template.matchAll(PLACEHOLDER)].map((m) => m[1]!.split('|')[0]!.trim());
  if (template !== null && typeof template === 'object') return Object.values(template).flatMap(templatePaths);
  return [];
}

/** Read a dotted path (`data.account.plan`) from a nested object. */
export function lookup(scope: unknown, path: string): unknown {
  let value: unknown = scope;
  for (const key of path.split('.')) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}

function isMissing(value: unknown): boolean {
  return value === undefined || value === null || value === '';
}

function isUntrusted(path: string, untrusted: readonly string[]): boolean {
  return untrusted.some((prefix) => path === prefix || path.startsWith(`${prefix}.`));
}

function evaluate(expression: string, scope: unknown, problems: string[], options: RenderOptions): unknown {
  const [path, ...filters] = expression.split('|').map((part) => part.trim());
  let value = lookup(scope, path!);
  if (isUntrusted(path!, options.untrusted ?? [])) {
    // Omitted untrusted text is the template's intent, not a problem of the definition.
    value = typeof value === 'string' ? inertText(value) : undefined;
    if (isMissing(value) && !filters.some((f) => f.startsWith('default'))) return '';
  }
  for (const filter of filters) {
    const colon = filter.indexOf(':');
    const name = colon < 0 ? filter : filter.slice(0, colon).trim();
    const arg = colon < 0 ? '' : filter.slice(colon + 1).trim();
    if (!FILTERS.has(name)) problems.push(`unknown filter "${name}" in {{${expression}}}`);
    else if (name === 'default') value = isMissing(value) ? arg : value;
    else if (isMissing(value)) continue;
    else if (name === 'upper') value = String(value).toUpperCase();
    else if (name === 'lower') value = String(value).toLowerCase();
    else value = JSON.stringify(value);
  }
  if (isMissing(value)) problems.push(`no value for "${path}"`);
  return value;
}

function renderString(template: string, scope: unknown, problems: string[], options: RenderOptions): unknown {
  const single = SINGLE.exec(template);
  if (single) return evaluate(single[1]!, scope, problems, options) ?? '';
  return template.replace(PLACEHOLDER, (_, expression: string) => {
    const value = evaluate(expression, scope, problems, options);
    if (isMissing(value)) return '';
    return typeof value === 'object' ? JSON.stringify(value) : String(value);
  });
}

function renderValue(template: unknown, scope: unknown, problems: string[], options: RenderOptions): unknown {
  if (typeof template === 'string') return renderString(template, scope, problems, options);
  if (Array.isArray(template)) return template.map((item) => renderValue(item, scope, problems, options));
  if (template !== null && typeof template === 'object')
    return Object.fromEntries(Object.entries(template).map(([k, v]) => [k, renderValue(v, scope, problems, options)]));
  return template;
}

/**
 * Render every string inside `template` (a string, or arrays/objects of them) against `scope`.
 *
 * @example
 * renderTemplate('Hello {{name | default: there}}', {}).value // 'Hello there'
 * renderTemplate('Hello {{email.fromName | default: there}}', { email: { fromName: 'evil.example' } }, { untrusted: ['email'] }).value // 'Hello there'
 */
export function renderTemplate(template: unknown, scope: unknown, options: RenderOptions = {}): Rendered {
  const problems: string[] = [];
  const value = renderValue(template, scope, problems, options);
  return { value, problems: [...new Set(problems)] };
}
