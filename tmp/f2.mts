import { readFileSync } from 'node:fs';
import { codeBlocks } from '/work/wt-docs/test/docs/markdown.ts';
const text = readFileSync('/tmp/README.orig.md', 'utf8');
console.log(codeBlocks(text).filter((b) => /^(```|#{2,6} )/m.test(b.value)).map((b) => b.position!.start.line));
