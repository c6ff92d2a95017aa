/** The ingress MIME budget: what refusing a MIME bomb costs, against parsing a large legitimate mail. */
import { DEFAULT_POLICY, isRejection, parseInbound } from '../../../src/runtime/triggers/email/checks.ts';
import { largeAttachment, MIME_BOMBS } from '../../runtime/triggers/email/mime-bombs.ts';
import { type BenchRun, gcExposed } from '../harness.ts';

/**
 * Heap used right after one call of `fn`, garbage included, over a collected heap (MB): an upper bound on what the call
 * needs.
 */
async function heapGrowthMB(fn: () => Promise<void>): Promise<number> {
  globalThis.gc?.();
  const before = process.memoryUsage().heapUsed;
  await fn();
  return (process.memoryUsage().heapUsed - before) / (1024 * 1024);
}

export async function ingressBudget(bench: BenchRun): Promise<void> {
  const MiB = 1024 * 1024;
  // Raw bytes, as the ingress gets them from S3.
  const bytes = (raw: string) => new TextEncoder().encode(raw);
  const refusals: Record<string, { meanMs: number; heapGrowthMB: number }> = {};
  for (const [kind, make] of Object.entries(MIME_BOMBS)) {
    const bomb = bytes(make(10 * MiB - 64 * 1024));
    const refuse = async () => {
      const result = await parseInbound(bomb, DEFAULT_POLICY);
      if (!isRejection(result) || result.rejected !== 'mime_budget')
        throw new Error(`10 MiB of ${kind} was not refused as mime_budget`);
    };
    const timed = await bench.repeated({
      name: `ingress.refuse.${kind.replace(/ /g, '-')}`,
      description: `parseInbound of 10 MiB of ${kind} (${bomb.length} bytes): refused as mime_budget before parsing`,
      warmupIterations: 3,
      iterations: 30,
      unit: 'mails',
      fn: refuse,
    });
    refusals[kind] = { meanMs: timed?.meanMs ?? NaN, heapGrowthMB: await heapGrowthMB(refuse) };
  }
  const legitimate = bytes(largeAttachment(10 * MiB - 64 * 1024));
  const parsed = await bench.repeated({
    name: 'ingress.parse.largeAttachment',
    description: `parseInbound of a legitimate 10 MiB mail (${legitimate.length} bytes, a base64 attachment in 76-character lines): within the budget, parsed`,
    warmupIterations: 1,
    iterations: 5,
    unit: 'mails',
    fn: async () => {
      if (isRejection(await parseInbound(legitimate, DEFAULT_POLICY)))
        throw new Error('the legitimate mail was refused');
    },
  });
  // The costliest mail the budget lets through: a text body of one-character lines, just under the line limit.
  const edge = bytes(MIME_BOMBS['short lines']!(3 * (DEFAULT_POLICY.maxMimeLines - 20)));
  const parseEdge = async () => {
    if (isRejection(await parseInbound(edge, DEFAULT_POLICY)))
      throw new Error('the mail at the line limit was refused');
  };
  const atLimit = await bench.repeated({
    name: 'ingress.parse.lineLimit',
    description: `parseInbound of a text body of one-character lines just under the ${DEFAULT_POLICY.maxMimeLines}-line limit (${edge.length} bytes): the slowest mail the budget parses`,
    warmupIterations: 1,
    iterations: 5,
    unit: 'mails',
    fn: parseEdge,
  });
  bench.figures.ingressBudget = {
    refusals,
    largeAttachmentMs: parsed?.meanMs ?? null,
    lineLimit: { meanMs: atLimit?.meanMs ?? null, heapGrowthMB: await heapGrowthMB(parseEdge) },
    policy: { maxMimeLines: DEFAULT_POLICY.maxMimeLines, maxMimeParts: DEFAULT_POLICY.maxMimeParts },
  };
  const slowest = Math.max(...Object.values(refusals).map((r) => r.meanMs));
  const largest = Math.max(...Object.values(refusals).map((r) => r.heapGrowthMB));
  bench.target(
    'ingress.refuseBombMs',
    `the slowest refusal of a 10 MiB MIME bomb (${Object.keys(MIME_BOMBS).join(', ')}), mean ms`,
    Number.isNaN(slowest) ? null : slowest,
    { max: 100 },
  );
  bench.target(
    'ingress.refuseBombHeapMB',
    `heap used by one refusal of a 10 MiB MIME bomb, garbage included, MB (the worst of ${Object.keys(MIME_BOMBS).length})`,
    gcExposed ? largest : null,
    { max: 64 },
  );
}
