/**
 * The benchmark tables of docs/internals/benchmarks.md, produced from the bench document (`npm run -s bench --
 * --markdown`).
 */
import type { BundleFigure } from './bundles.ts';
import type { Target } from './harness.ts';

const num = (v: unknown, digits = 2) =>
  typeof v === 'number' ? (Number.isInteger(v) ? String(v) : v.toFixed(digits)) : 'not measured';

/** Markdown for the document `BenchRun.writeJson` returns. */
export function benchMarkdown(document: Record<string, any>): string {
  const lines = [
    `Measured ${String(document.finishedAt).slice(0, 10)} on ${document.environment.cpus} × ${document.environment.cpu}, Node ${document.environment.node}, commit ${document.environment.commit}.`,
    '',
  ];
  lines.push('| Target | Value | Limit | Holds |', '| --- | --- | --- | --- |');
  for (const [name, t] of Object.entries(document.targets as Record<string, Target>))
    lines.push(
      `| \`${name}\`: ${t.description} | ${num(t.value)} | ${t.when === 'value <= limit' ? '≤' : '≥'} ${t.limit} | ${t.holds ? 'yes' : 'no'} |`,
    );
  const o = document.figures.orchestration;
  if (o) {
    lines.push(
      '',
      `| Orchestration (same handlers, ${o.rounds} interleaved rounds of the 5 flow samples) | ms per email | × plain chain |`,
      '| --- | --- | --- |',
    );
    for (const v of ['chain', 'runtime', 'langgraph'])
      lines.push(`| ${v} | ${num(o.meanMsPerEmail[v], 1)} | ${num(o.meanMsPerEmail[v] / o.meanMsPerEmail.chain)} |`);
  }
  const l = document.figures.leadThroughput;
  if (l) {
    const row = (what: string, key: string, digits: number) =>
      `| ${what} | ${num(l.concurrency16[key], digits)} | ${num(l.concurrency1[key], digits)} |`;
    lines.push(
      '',
      `| Lead events on DynamoDB Local (medians of ${l.rounds} interleaved rounds) | 16 in flight | 1 in flight |`,
      '| --- | --- | --- |',
    );
    lines.push(row('raw PutItem/s', 'rawPutItemPerSec', 0));
    lines.push(
      row(
        `the lead events' own TransactWriteItems (${num(l.itemsPerTransaction)} items each) replayed raw, per s`,
        'rawTransactionsPerSec',
        0,
      ),
      row('× raw PutItem', 'rawTransactionsOverRawPutItem', 2),
    );
    lines.push(
      row('lead events/s: bus → Express workflow → DynamoDB Local', 'leadEventsPerSec', 0),
      row('× raw PutItem', 'leadEventsOverRawPutItem', 2),
      row('× their transactions replayed raw', 'leadEventsOverRawTransactions', 2),
    );
    lines.push(
      row('lead events/s, each wave also published: + outbox pipe → listeners', 'publishedLeadEventsPerSec', 0),
      row('× raw PutItem', 'publishedOverRawPutItem', 2),
    );
    lines.push(
      `| DynamoDB requests per lead event | ${Object.entries(l.dynamoRequestsPerEvent as Record<string, number>)
        .map(([command, n]) => `${command} ${num(n)}`)
        .join(', ')} | |`,
    );
  }
  const c = document.figures.cost;
  if (c) {
    lines.push(
      '',
      `| Per 1,000 executions (${c.modelId}, mean of the 5 flows), USD | fast path | model path |`,
      '| --- | --- | --- |',
    );
    for (const k of Object.keys(c.fastPath.costPer1000))
      lines.push(`| ${k} | ${num(c.fastPath.costPer1000[k], 4)} | ${num(c.modelPath.costPer1000[k], 4)} |`);
    lines.push(
      `| model calls per execution | ${num(c.fastPath.meanCounts.modelCalls)} | ${num(c.modelPath.meanCounts.modelCalls)} |`,
    );
    lines.push(
      `| state transitions per execution | ${num(c.fastPath.meanCounts.stateTransitions)} | ${num(c.modelPath.meanCounts.stateTransitions)} |`,
    );
    const k = c.caching;
    lines.push(
      '',
      `Prompt caching: ${num(k.cachedShareOfInputTokens * 100, 0)}% of input tokens read from the cache; ${k.why}.`,
    );
  }
  const b = document.figures.bundles as
    | { sdkTraces: boolean; bundleAwsSdk: boolean; builds: BundleFigure[]; largestWithOtherOptions: BundleFigure[] }
    | undefined;
  if (b) {
    const row = (f: BundleFigure, note = '') =>
      `| \`${f.entry}\`${f.workflowDir ? ` (${f.workflowDir.replace(/^statemachines\//, '')})` : ''}${note} | ${f.minifiedKB} | ${f.initMs} |`;
    lines.push(
      '',
      `| Lambda bundle (sdkTraces ${b.sdkTraces}, bundleAwsSdk ${b.bundleAwsSdk}) | minified KB | init ms |`,
      '| --- | --- | --- |',
    );
    for (const f of b.builds) lines.push(row(f));
    for (const f of b.largestWithOtherOptions)
      lines.push(row(f, `, with \`sdkTraces: ${f.sdkTraces}\`, \`bundleAwsSdk: ${f.bundleAwsSdk}\``));
  }
  return `${lines.join('\n')}\n`;
}
