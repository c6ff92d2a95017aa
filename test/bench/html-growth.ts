/**
 * `npm run bench:html`: how the cost of turning hostile HTML into text grows from n to 10n, for
 * every shape that was quadratic somewhere (our old regex converter, htmlparser2's Parser,
 * html-to-text, postal-mime's own converter). Linear work gives a ratio near 10, quadratic near
 * 100; a ratio over 40 fails. Best of five runs per size, after a JIT warm-up. A benchmark, not a
 * test: timing on a shared machine is for measuring, never for asserting in the test suite.
 */
import { DEFAULT_POLICY, isRejection, parseInbound } from '../../src/runtime/triggers/email/checks.ts';
import { htmlToText } from '../../src/runtime/triggers/email/html.ts';
import { HOSTILE_HTML } from '../runtime/triggers/email/hostile-html.ts';

const LIMIT = 40;

async function growth(run: (n: number) => unknown, n: number): Promise<number> {
  const best = async (size: number) => {
    let min = Infinity;
    for (let i = 0; i < 5; i++) {
      const start = performance.now();
      await run(size);
      min = Math.min(min, performance.now() - start);
    }
    return Math.max(min, 0.5);
  };
  await run(n);
  return (await best(10 * n)) / (await best(n));
}

const htmlOnly = (html: string) =>
  `From: a@example.org\r\nTo: b@example.org\r\nSubject: x\r\nContent-Type: text/html\r\n\r\n${html}\r\n`;
const policy = { ...DEFAULT_POLICY, maxHtmlChars: Infinity };

let failed = 0;
for (const [name, unit] of HOSTILE_HTML) {
  const direct = await growth((n) => htmlToText(unit.repeat(n), { maxChars: Infinity }), 50_000);
  const parsed = await growth(async (n) => {
    const result = await parseInbound(htmlOnly(unit.repeat(n)), policy);
    if (isRejection(result)) throw new Error(result.rejected);
  }, 10_000);
  const worst = Math.max(direct, parsed);
  if (worst >= LIMIT) failed++;
  console.log(
    `${name.padEnd(22)} htmlToText ×${direct.toFixed(1)}  parseInbound ×${parsed.toFixed(1)}  ${worst < LIMIT ? 'linear' : `OVER ${LIMIT}`}`,
  );
}
process.exitCode = failed ? 1 : 0;
