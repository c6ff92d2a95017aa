import { basename, relative } from 'node:path';
import type { Command } from 'commander';
import { DEFAULT_HISTORY_DIR } from '../../../infra/local/history.ts';
import { SAMPLES_DIR, WARRANTY_WORKFLOW, WarrantySession } from '../../../infra/local/warranty-session.ts';
import { action } from '../output.ts';
import { formatEmailResults, logLevelFor, modelLabel, modelOption, progressLine, runExitCode, verboseOption, withCleanStdout, type SessionFlags } from '../session-output.ts';

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

export function register(program: Command): void {
  program
    .command('demo')
    .description(
      `Process the sample emails (${relative(process.cwd(), SAMPLES_DIR) || SAMPLES_DIR}: one per flow, a spam and an auto-reply) ` +
        'in a fresh local session and print each email’s step trail and reply. No AWS account needed.',
    )
    .addOption(modelOption())
    .addOption(verboseOption())
    .action(
      action(async (flags: SessionFlags) => {
        const started = Date.now();
        const { results, startupMs } = await withCleanStdout(async (print) => {
          print(`Stepwise demo: ${WARRANTY_WORKFLOW} on the local runtime (synthesized ASL, DynamoDB Local), model: ${modelLabel(flags.model)}\n\n`);
          const session = await WarrantySession.start({ model: flags.model, logLevel: logLevelFor(flags) });
          const progress = progressLine();
          try {
            const ready = Date.now() - started;
            const processed = await session.processFiles([SAMPLES_DIR], (r, i, n) => progress.update(`[${i + 1}/${n}] ${basename(r.file)} ${r.status}`));
            return { results: processed, startupMs: ready };
          } finally {
            progress.clear();
            await session.close();
          }
        });
        const lines = [formatEmailResults(results).trimEnd(), `Done in ${seconds(Date.now() - started)} (session start ${seconds(startupMs)}).`];
        // Point at the longest trail: it shows the most of the history view.
        const longest = results.filter((r) => r.executionName && r.steps.length).sort((a, b) => b.steps.length - a.steps.length)[0];
        if (longest)
          lines.push(`Execution histories are in ${relative(process.cwd(), DEFAULT_HISTORY_DIR) || DEFAULT_HISTORY_DIR}/; show one with: npx stepwise history ${longest.executionName}`);
        process.stdout.write(`${lines.join('\n')}\n`);
        process.exitCode = runExitCode(results);
      }),
    );
}
