import { readFileSync } from 'node:fs';
import { codeBlocks } from '/work/wt-docs/test/docs/markdown.ts';
const text = readFileSync('/tmp/README.orig.md', 'utf8');
for (const b of codeBlocks(text)) if (!/(```|~~~)\s*$/.test(text.slice(0, b.position!.end.offset))) console.log('unclosed at', b.position!.start.line);
const bad = codeBlocks(text).filter((b) => b.lang === 'bash' && /^#{1,3} /m.test(b.value));
console.log(bad.map((b) => b.position!.start.line));
