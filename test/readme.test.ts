import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createProgram } from '../src/cli/program.ts';
import { PROJECT_ROOT } from '../src/core/paths.ts';
import { codeBlocks, markdownFiles, readMarkdown } from './docs/markdown.ts';

const readme = readFileSync(join(PROJECT_ROOT, 'README.md'), 'utf8');
const pkg = JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')) as { engines: { node: string } };

/** Words of the project's own planning that mean nothing to a reader. */
const INTERNAL = /\bseed\b|\bseed's\b|\bAC\d+\b|\bstory \d/i;

describe('README', () => {
  it('has a Quick start of two command lines: install + demo, and the tests', () => {
    const quickStart = readme.split('## Quick start')[1]!.split('```bash\n')[1]!.split('```')[0]!;
    expect(quickStart.trim().split('\n')).toEqual(['npm install && npm run demo', 'npm test']);
  });

  it('is at most 15 KB', () => {
    expect(statSync(join(PROJECT_ROOT, 'README.md')).size).toBeLessThanOrEqual(15 * 1024);
  });

  it('says the Node.js versions package.json supports', () => {
    expect(pkg.engines.node).toBe('>=22');
    expect(readme).toContain('Node.js 22 or later');
    expect(readme).not.toMatch(/Node\.js 20\+/);
  });
});

describe('README and docs', () => {
  it('close every code fence where it ends (an unclosed fence swallows the headings after it)', () => {
    for (const file of markdownFiles()) {
      const text = readMarkdown(file);
      for (const block of codeBlocks(text)) {
        const where = `${file}: the fence opened on line ${block.position!.start.line}`;
        expect(text.slice(0, block.position!.end.offset), where).toMatch(/(```|~~~)\s*$/);
        expect(block.value, where).not.toMatch(/^(```|#{2,6} )/m);
      }
    }
  });

  it('use no internal planning words, nor does any command help', async () => {
    for (const file of markdownFiles()) expect(readMarkdown(file), file).not.toMatch(INTERNAL);
    const program = await createProgram();
    const helps = (c: typeof program): string[] => [c.helpInformation(), ...c.commands.flatMap(helps)];
    for (const help of helps(program)) expect(help).not.toMatch(INTERNAL);
  });
});
