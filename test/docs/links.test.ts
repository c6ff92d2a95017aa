/**
 * The README, CONTRIBUTING.md and the docs link only to what exists: pages, files and headings (anchors as GitHub
 * and the site make them: remark-validate-links, offline), and external links are well-formed
 * URLs (CI is offline, so they are not fetched). `npm run docs:build` also fails on a dead page link.
 */
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../src/core/paths.ts';
import { useTempDirs } from '../support/tmp.ts';
import { links, markdownFiles, readMarkdown } from './markdown.ts';

/** remark-validate-links over `paths` in `cwd`; rejects (exit 1) on any problem, which it prints on stderr. */
const check = (cwd: string, paths: string[]) =>
  promisify(execFile)(
    join(PROJECT_ROOT, 'node_modules/.bin/remark'),
    [
      '--use',
      `${join(PROJECT_ROOT, 'node_modules/remark-validate-links/index.js')}=repository:false`,
      '--frail',
      '--quiet',
      '--no-stdout',
      '--no-color',
      ...paths,
    ],
    { cwd },
  );

const tempDir = useTempDirs('stepwise-links-');

describe('docs links', () => {
  it('every link to a page, a file or a heading of the README, CONTRIBUTING.md and docs/ resolves', {
    timeout: 60_000,
  }, async () => {
    const outcome = await check(PROJECT_ROOT, ['README.md', 'CONTRIBUTING.md', 'docs']).then(
      (r) => ({ code: 0, out: r.stderr }),
      (e: { code: number; stderr: string }) => ({ code: e.code, out: e.stderr }),
    );
    expect(outcome.out.trim()).toBe('');
    expect(outcome.code).toBe(0);
  });

  it('the check finds a missing heading (it can fail)', { timeout: 60_000 }, async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'a.md'), '# A\n\n[b](b.md#no-such-heading)\n');
    writeFileSync(join(dir, 'b.md'), '# B\n');
    const e = await check(dir, ['.']).then(
      () => undefined,
      (error: { code: number; stderr: string }) => error,
    );
    expect(e?.code).toBe(1);
    expect(e?.stderr).toMatch(/no-such-heading/);
  });

  it('every external link is a well-formed http(s) or mailto URL', () => {
    for (const file of [...markdownFiles(), 'CONTRIBUTING.md'])
      for (const url of links(readMarkdown(file)).filter((u) => /^[a-z][a-z0-9+.-]*:/i.test(u))) {
        expect(URL.canParse(url), `${file}: ${url}`).toBe(true);
        expect(new URL(url).protocol, `${file}: ${url}`).toMatch(/^(https?|mailto):$/);
      }
  });
});
