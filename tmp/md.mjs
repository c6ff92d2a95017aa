import { createMarkdownRenderer } from 'vitepress';
import { readFileSync } from 'node:fs';
const md = await createMarkdownRenderer(process.cwd() + '/docs');
const html = md.render(readFileSync(process.argv[2], 'utf8'));
const lines = html.split('\n');
console.log(lines.slice(Number(process.argv[3]) - 3, Number(process.argv[3]) + 2).join('\n'));
