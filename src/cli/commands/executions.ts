import type { Command } from 'commander';
import { DEFAULT_PAUSES_DIR, PauseStore } from '../../local/pauses.ts';
import { pauseSummary } from '../../local/workflow-session.ts';
import { withExamples } from '../help.ts';
import { action, printJson } from '../output.ts';
import { pauseLines } from '../session-output.ts';

export function register(program: Command): void {
  const command = program
    .command('executions')
    .description(
      'List local executions paused at a checkpoint (a step’s pause), oldest first, with what the resumer must do, ' +
        'the deadline and the resume command. --json prints [{ execution, workflow, state, step, next, requiredActions, pausedAt, deadline, resume }].',
    )
    .option('--dir <dir>', 'where paused executions are kept', DEFAULT_PAUSES_DIR)
    .option('--json', 'print JSON');
  withExamples(command, ['stepwise executions', 'stepwise executions --json']);
  command.action(
    action(async (flags: { dir: string; json?: boolean }) => {
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
