/**
 * Sample mails for the ingress tests (the fixture project's case-desk samples unless a folder is given), and a way to
 * vary their headers the way SES or a sender would.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { FIXTURE_STATEMACHINES } from '../../../support/fixture-project.ts';

const DESK = join(FIXTURE_STATEMACHINES, 'case-desk');

export const SAMPLES_DIR = join(DESK, 'samples');

/** The sample `<name>.eml` of `dir`. */
export const sample = (name: string, dir = SAMPLES_DIR): string => readFileSync(join(dir, `${name}.eml`), 'utf8');

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

/**
 * The reply templates of a fallback step file (`## Reply: <name>` + a text block), as the step reads them; by default
 * case-desk's 04-hand-off.
 */
export function fallbackTemplates(
  stepFile = join(DESK, 'steps', '04-hand-off.md'),
): Array<readonly [name: string, template: string]> {
  const file = readFileSync(stepFile, 'utf8');
  return [...file.matchAll(/^## Reply: ([a-z-]+)[ \t]*\r?\n+```text\r?\n([\s\S]*?)\r?\n```/gm)].map(
    (m) => [m[1]!, m[2]!] as const,
  );
}
