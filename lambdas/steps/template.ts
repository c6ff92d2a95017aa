/**
 * `{{placeholder}}` templates for replies and offline-model rules, rendered from a step's context.
 *
 * A placeholder is a dotted path into the scope, optionally piped through filters:
 * `{{data.serialNumber}}`, `{{found.serial | upper}}`, `{{email.fromName | default: there}}`.
 * Filters: `upper`, `lower`, `json`, `default: <text>` (used when the value is missing or empty).
 * A template that is exactly one placeholder yields the raw value (an object stays an object).
 */

const PLACEHOLDER = /\{\{\s*([^{}]+?)\s*\}\}/g;
const SINGLE = /^\{\{\s*([^{}]+?)\s*\}\}$/;
const FILTERS = new Set(['upper', 'lower', 'json', 'default']);

export interface Rendered {
  value: unknown;
  /** Placeholders without a value (and no `default` filter) or with an unknown filter; the caller decides whether that is fatal. */
  problems: string[];
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

function evaluate(expression: string, scope: unknown, problems: string[]): unknown {
  const [path, ...filters] = expression.split('|').map((part) => part.trim());
  let value = lookup(scope, path!);
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

function renderString(template: string, scope: unknown, problems: string[]): unknown {
  const single = SINGLE.exec(template);
  if (single) return evaluate(single[1]!, scope, problems) ?? '';
  return template.replace(PLACEHOLDER, (_, expression: string) => {
    const value = evaluate(expression, scope, problems);
    if (isMissing(value)) return '';
    return typeof value === 'object' ? JSON.stringify(value) : String(value);
  });
}

function renderValue(template: unknown, scope: unknown, problems: string[]): unknown {
  if (typeof template === 'string') return renderString(template, scope, problems);
  if (Array.isArray(template)) return template.map((item) => renderValue(item, scope, problems));
  if (template !== null && typeof template === 'object')
    return Object.fromEntries(Object.entries(template).map(([k, v]) => [k, renderValue(v, scope, problems)]));
  return template;
}

/**
 * Render every string inside `template` (a string, or arrays/objects of them) against `scope`.
 *
 * @example
 * renderTemplate('Hello {{name | default: there}}', {}).value // 'Hello there'
 */
export function renderTemplate(template: unknown, scope: unknown): Rendered {
  const problems: string[] = [];
  const value = renderValue(template, scope, problems);
  return { value, problems: [...new Set(problems)] };
}
