/** The README and every page of docs/, and the parts of them the docs tests read. */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import type { Code, Link, Root } from 'mdast';
import { remark } from 'remark';
import { visit } from 'unist-util-visit';
import { PROJECT_ROOT } from '../../src/core/paths.ts';

/** README.md and docs/**\/*.md (the site's build output and cache aside), relative to the project root. */
export function markdownFiles(): string[] {
  const docs = readdirSync(join(PROJECT_ROOT, 'docs'), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.md') && !f.startsWith('.vitepress'))
    .map((f) => join('docs', f));
  return ['README.md', ...docs.sort()];
}

export const readMarkdown = (file: string) => readFileSync(join(PROJECT_ROOT, file), 'utf8');

const tree = (text: string) => remark().parse(text) as Root;

/** Fenced code blocks with their language. */
export function codeBlocks(text: string): Code[] {
  const blocks: Code[] = [];
  visit(tree(text), 'code', (node: Code) => void blocks.push(node));
  return blocks;
}

/** Every link target of a page. */
export function links(text: string): string[] {
  const found: string[] = [];
  visit(tree(text), 'link', (node: Link) => void found.push(node.url));
  return found;
}

export const fromRoot = (file: string) => relative(PROJECT_ROOT, file);
