import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../lambdas/lib/workflow/loader.ts';
import { definitionReference } from '../../lambdas/lib/workflow/reference.ts';

const README = join(PROJECT_ROOT, 'README.md');
const START = '<!-- reference:start -->\n';
const END = '<!-- reference:end -->';

/** The README's generated part, between the reference markers. */
const between = (text: string) => text.slice(text.indexOf(START) + START.length, text.indexOf(END));

describe('README "Defining a workflow" reference', () => {
  it('is exactly what the zod schemas generate (run with UPDATE_README=1 to rewrite it)', () => {
    const readme = readFileSync(README, 'utf8');
    expect(readme).toContain(START);
    const generated = `\n${definitionReference()}\n`;
    if (process.env.UPDATE_README === '1') writeFileSync(README, readme.replace(START + between(readme), START + generated));
    expect(between(readFileSync(README, 'utf8'))).toBe(generated);
  });

  it('documents every field of the manifest and the frontmatter with a description', () => {
    const rows = definitionReference().split('\n').filter((l) => l.startsWith('| `'));
    expect(rows.length).toBeGreaterThan(30);
    for (const row of rows) expect(row.split(/(?<!\\)\|/)[4]!.trim(), row).not.toBe('');
  });
});
