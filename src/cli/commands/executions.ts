import type { Command } from 'commander';
import { listWorkflows, loadWorkflow } from '../../definitions/workflow/loader.ts';
import { ExecutionIndex, type ExecutionListing, type ListQuery } from '../../local/records/execution-list.ts';
import { DEFAULT_PAUSES_DIR, PauseStore } from '../../local/records/pauses.ts';
import { DEFAULT_STATE_DIRS } from '../../local/records/state-dirs.ts';
import { pauseSummary } from '../../local/sessions/workflow-session.ts';
import { withExamples } from '../help.ts';
import { action, printJson } from '../output.ts';
import { pauseLines } from '../session-output.ts';

interface Flags extends Omit<ListQuery, 'q'> {
  dir: string;
  json?: boolean;
  all?: boolean;
  search?: string;
}

/** One line of `--all`: what it was about, status, outcome, when. */
const listingLine = (e: ExecutionListing) =>
  `${e.name} (${e.workflow ?? '?'}) ${e.status}${e.outcome ? ` → ${e.outcome}` : ''} ${e.startDate}\n  ${
    Object.entries(e.about)
      .map(([k, v]) => `${k}: ${v}`)
      .join(' · ') || '(no identifying input)'
  }${e.detail ? `\n  ${e.detail}` : ''}`;

/** `--all`: every stored execution and refused mail, searched and filtered. */
async function listAll(flags: Flags): Promise<void> {
  const { dir, json, all, search, ...filters } = flags;
  const paused = new Set(new PauseStore(dir).list().map((p) => p.name));
  const index = new ExecutionIndex(DEFAULT_STATE_DIRS, (w) =>
    listWorkflows().includes(w) ? loadWorkflow(w) : undefined,
  );
  const list = await index.list({ ...filters, ...(search && { q: search }) }, paused);
  if (json) return printJson({ executions: list.executions, total: list.total, unreadable: list.unreadable });
  if (list.total === 0) return void process.stdout.write('no executions match\n');
  process.stdout.write(list.executions.map(listingLine).join('\n') + '\n');
  if (list.total > list.executions.length)
    process.stdout.write(`(${list.executions.length} of ${list.total}: --limit to see more)\n`);
}

export function register(program: Command): void {
  const command = program
    .command('executions')
    .description(
      'List local executions paused at a checkpoint (a step’s pause), oldest first, with what the resumer must do, ' +
        'the deadline and the resume command. --json prints [{ execution, workflow, state, step, next, requiredActions, pausedAt, deadline, resume }]. ' +
        'With --all: every stored execution and refused mail, with what it was about and its outcome, searched and filtered ' +
        '(--json prints { executions: [{ kind, name, workflow, status, about, outcome, visited, startDate, ... }], total }).',
    )
    .option('--dir <dir>', 'where paused executions are kept', DEFAULT_PAUSES_DIR)
    .option('--json', 'print JSON')
    .option('--all', 'list every stored execution (local, imported) and refused mail, newest first')
    .option('--search <text>', '--all: only those whose input, outputs or replies contain every word')
    .option('--workflow <name>', '--all: only this workflow')
    .option('--status <status>', '--all: only this status (SUCCEEDED, FAILED, PAUSED, REFUSED, ...)')
    .option('--outcome <outcome>', '--all: only this outcome')
    .option('--step <step>', '--all: only those that ran this step')
    .option('--error <error>', '--all: only those that failed with this error (any: every failure)')
    .option('--since <iso>', '--all: started at or after')
    .option('--until <iso>', '--all: started at or before')
    .option('--sort <key>', '--all: started, duration, steps, outcome or name', 'started')
    .option('--order <order>', '--all: desc or asc', 'desc')
    .option('--limit <n>', '--all: at most this many', '200');
  withExamples(command, [
    'stepwise executions',
    'stepwise executions --json',
    'stepwise executions --all --search "charged twice"',
    'stepwise executions --all --step 04-hand-off --json',
  ]);
  command.action(
    action(async (flags: Flags) => {
      if (flags.all) return listAll(flags);
      const paused = new PauseStore(flags.dir).list().map(pauseSummary);
      if (flags.json) return printJson(paused);
      if (paused.length === 0) return void process.stdout.write('no paused executions\n');
      for (const p of paused)
        process.stdout.write(
          [`${p.execution} (${p.workflow ?? '?'}) PAUSED since ${p.pausedAt}`, ...pauseLines(p)].join('\n') + '\n\n',
        );
    }),
  );
}
