import { parse } from '@vue/compiler-sfc';
import { createMarkdownRenderer } from 'vitepress';
import { describe, expect, it } from 'vitest';
import site from '../../docs/.vitepress/config.ts';
import { markdownFiles, readMarkdown } from './markdown.ts';

/** The errors the docs site's build (VitePress renders each page to HTML, then Vue compiles it) stops on. */
async function siteErrors(text: string): Promise<string[]> {
  const md = await createMarkdownRenderer('docs', site.markdown);
  const { errors } = parse(`<template><div>${md.render(text)}</div></template>`);
  return errors.map((e) => e.message);
}

describe('docs site', () => {
  it('every page compiles as the site builds it (a <word> outside code is an unclosed element)', {
    timeout: 60_000,
  }, async () => {
    const broken: string[] = [];
    for (const file of markdownFiles().filter((f) => f.startsWith('docs/'))) {
      for (const error of await siteErrors(readMarkdown(file))) broken.push(`${file}: ${error}`);
    }
    expect(broken).toEqual([]);
  });

  it('the check finds a bare <step> and a code span that breaks before <pid> (it can fail)', async () => {
    expect(await siteErrors('Press **Fork from <step>** to fork.')).not.toEqual([]);
    expect(await siteErrors('one line (`already being resumed (by process\n<pid> ...)`), or not.')).not.toEqual([]);
    expect(await siteErrors('Press **Fork from `<step>`** and `{{found.serial}}`.')).toEqual([]);
  });
});
