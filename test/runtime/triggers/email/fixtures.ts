/** Sample mails for the ingress tests, and a way to vary their headers the way SES or a sender would. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { STATEMACHINES_DIR } from '../../../../src/core/paths.ts';

export const SAMPLES_DIR = join(STATEMACHINES_DIR, 'warranty-email', 'samples');

export const sample = (name: string): string => readFileSync(join(SAMPLES_DIR, `${name}.eml`), 'utf8');

/**
 * A copy of `raw` with the named headers (and their continuation lines) removed and `add`
 * prepended on top, where a receiving server puts the headers it adds.
 */
export function withHeaders(raw: string, edit: { remove?: string[]; add?: string[] }): string {
  const split = raw.indexOf('\n\n');
  const head = raw.slice(0, split).split('\n');
  const drop = new Set((edit.remove ?? []).map((h) => h.toLowerCase()));
  const kept: string[] = [];
  let skipping = false;
  for (const line of head) {
    if (/^[ \t]/.test(line)) {
      if (!skipping) kept.push(line);
      continue;
    }
    skipping = drop.has(line.slice(0, line.indexOf(':')).toLowerCase());
    if (!skipping) kept.push(line);
  }
  return [...(edit.add ?? []), ...kept].join('\n') + raw.slice(split);
}

/** The fallback step's reply templates (`## Reply: <name>` + a text block), as the step reads them. */
export function fallbackTemplates(): Array<readonly [name: string, template: string]> {
  const file = readFileSync(join(STATEMACHINES_DIR, 'warranty-email', 'steps', '04-out-of-scope.md'), 'utf8');
  return [...file.matchAll(/^## Reply: ([a-z-]+)[ \t]*\r?\n+```text\r?\n([\s\S]*?)\r?\n```/gm)].map(
    (m) => [m[1]!, m[2]!] as const,
  );
}
