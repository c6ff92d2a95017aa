import type { Command } from 'commander';
import { DEFAULT_HISTORY_DIR } from '../../local/records/history.ts';
import { readLocalExecutions, stepStats, type WorkflowStats } from '../../local/records/step-stats.ts';
import { withExamples } from '../help.ts';
import { action, printJson } from '../output.ts';

const count = (counts: Record<string, number>) =>
  Object.entries(counts)
    .sort((a, b) => b[1] - a[1])
    .map(([k, n]) => `${k} ${n}`)
    .join(', ');

function statsText(stats: WorkflowStats, label: string): string {
  const header = [
    'step',
    'runs',
    'samples',
    'failed',
    'retries',
    'hand-offs',
    'mean ms',
    'max ms',
    'model calls',
    'tokens in/out',
    'cache read',
    'decided by',
    'routes',
  ];
  const rows = stats.steps.map((s) => [
    s.step,
    String(s.runs),
    s.samples ? String(s.samples) : '',
    String(s.failures),
    String(s.retries),
    String(s.handoffs),
    s.meanDurationMs.toFixed(1),
    String(s.maxDurationMs),
    String(s.modelCalls),
    `${s.inputTokens}/${s.outputTokens}`,
    String(s.cacheReadInputTokens),
    count(s.decidedBy),
    count(s.routes),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  return (
    [
      `${label}: ${stats.executions} executions (${count(stats.byStatus) || 'none'})`,
      line(header),
      ...rows.map(line),
    ].join('\n') + '\n'
  );
}

export function register(program: Command): void {
  const command = program
    .command('stats')
    .description(
      'Step statistics over the stored local executions (`stepwise run`, `demo`): runs, failures, retries, hand-offs, duration, model calls and tokens per step, most-run first.',
    )
    .argument('[workflow]', 'only this workflow’s executions (default: all)')
    .option('--dir <dir>', 'the execution history folder', DEFAULT_HISTORY_DIR)
    .option('--json', 'print { executions, byStatus, steps: [...] }, nothing else on stdout');
  withExamples(command, ['stepwise stats support-desk', 'stepwise stats --json']);
  command.action(
    action(async (workflow: string | undefined, opts: { dir: string; json?: boolean }) => {
      const { records, unreadable } = readLocalExecutions(workflow, opts.dir);
      if (unreadable) process.stderr.write(`stepwise stats: ${unreadable} unreadable files in ${opts.dir} skipped\n`);
      const stats = stepStats(records);
      if (opts.json) printJson(stats);
      else process.stdout.write(statsText(stats, workflow ?? 'all workflows'));
    }),
  );
}
