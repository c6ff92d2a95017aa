import { existsSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import type { Command } from 'commander';
import { DEFAULT_HISTORY_DIR } from '../../../infra/local/history.ts';
import { expandInputPaths, WorkflowSession, type RunResult } from '../../../infra/local/workflow-session.ts';
import { InvalidInputError } from '../../../lambdas/lib/errors.ts';
import { listWorkflows, loadWorkflow } from '../../../lambdas/lib/workflow/loader.ts';
import { action } from '../output.ts';
import { formatResults, logLevelFor, modelLabel, modelOption, progressLine, runExitCode, verboseOption, withCleanStdout, type SessionFlags } from '../session-output.ts';

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/** A workflow's sample inputs: every `.eml`, `.json` and `.jsonl` file of its `samples/` folder. */
const samplesOf = (workflow: string) => join(loadWorkflow(workflow).dir, 'samples');

export function register(program: Command): void {
  program
    .command('demo')
    .description(
      'Run the sample inputs of workflows (their samples/ folder) in a fresh local session each and print every ' +
        'step trail and what was sent. No AWS account needed.',
    )
    .argument('[workflows...]', 'workflows to demo (default: every workflow with a samples/ folder)')
    .addOption(modelOption())
    .addOption(verboseOption())
    .action(
      action(async (requested: string[], flags: SessionFlags) => {
        const workflows = requested.length ? requested : listWorkflows().filter((w) => existsSync(samplesOf(w)));
        if (workflows.length === 0) throw new InvalidInputError('no workflow has a samples/ folder');
        const started = Date.now();
        const all: RunResult[] = [];
        for (const workflow of workflows) {
          const files = expandInputPaths([samplesOf(workflow)], ['.eml', '.json', '.jsonl']);
          const { results, startupMs } = await withCleanStdout(async (print) => {
            print(`Stepwise demo: ${workflow} on the local runtime (synthesized ASL, DynamoDB Local), model: ${modelLabel(flags.model)}\n\n`);
            const t0 = Date.now();
            const session = await WorkflowSession.start({ workflow, model: flags.model, logLevel: logLevelFor(flags) });
            const progress = progressLine();
            try {
              const ready = Date.now() - t0;
              const processed = await session.runFiles(files, (r, i, n) => progress.update(`[${i + 1}/${n}] ${basename(r.file)} ${r.status}`));
              return { results: processed, startupMs: ready };
            } finally {
              progress.clear();
              await session.close();
            }
          });
          all.push(...results);
          process.stdout.write(`${formatResults(results).trimEnd()}\n(session start ${seconds(startupMs)})\n\n`);
        }
        const lines = [`Done in ${seconds(Date.now() - started)}.`];
        // Point at the longest trail: it shows the most of the history view.
        const longest = all.filter((r) => r.executionName && r.steps.length).sort((a, b) => b.steps.length - a.steps.length)[0];
        if (longest)
          lines.push(`Execution histories are in ${relative(process.cwd(), DEFAULT_HISTORY_DIR) || DEFAULT_HISTORY_DIR}/; show one with: npx stepwise history ${longest.executionName}`);
        process.stdout.write(`${lines.join('\n')}\n`);
        process.exitCode = runExitCode(all);
      }),
    );
}
