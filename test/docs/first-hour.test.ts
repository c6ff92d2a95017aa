/** What the docs tell a new user to type outside this repository. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '../..');
const read = (file: string) => readFileSync(join(root, file), 'utf8');

describe('the first hour, as the docs tell it', () => {
  it.each(['README.md', 'docs/getting-started.md', 'docs/guides/project.md'])(
    '%s runs `stepwise new` from the tarball with --yes (npx cancels without a terminal otherwise)',
    (file) => {
      const lines = read(file)
        .split('\n')
        .filter((l) => /npx .*--package .*stepwise new/.test(l));
      expect(lines.length).toBeGreaterThan(0);
      for (const line of lines) expect(line).toMatch(/npx --yes --package /);
    },
  );

  it('imports the package by name in the code-step guide, never a repository path', () => {
    const imports = read('docs/guides/code-steps.md').match(/^import .* from '[^']+';$/gm) ?? [];
    expect(imports.length).toBeGreaterThan(0);
    for (const line of imports) expect(line).toMatch(/from 'stepwise(\/[a-z]+)?';$/);
  });
});
