import { createMarkdownRenderer } from 'vitepress';
import { readFileSync } from 'node:fs';
const md = await createMarkdownRenderer(process.cwd() + '/docs');
const html = md.render(readFileSync(process.argv[2], 'utf8'));
const i = html.indexOf(process.argv[3]);
console.log(html.slice(Math.max(0, i - 600), i + 300));
