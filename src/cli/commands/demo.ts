import { existsSync } from 'node:fs';
import { join, relative } from 'node:path';
import type { Command } from 'commander';
import { InvalidInputError } from '../../core/errors.ts';
import { listWorkflows, loadWorkflow } from '../../definitions/workflow/loader.ts';
import { DEFAULT_HISTORY_DIR } from '../../local/records/history.ts';
import { expandInputPaths, type RunResult, WorkflowSession } from '../../local/sessions/workflow-session.ts';
import { awsOptions, envOption } from '../aws-options.ts';
import { withExamples } from '../help.ts';
import { action, printJson } from '../output.ts';
import {
  briefResults,
  logLevelFor,
  modelLabel,
  modelOption,
  progressLine,
  runExitCode,
  type SessionFlags,
  verboseOption,
  withCleanStdout,
} from '../session-output.ts';

interface DemoFlags extends SessionFlags {
  env: string;
  json?: boolean;
}

const SAMPLE_FILES = ['.eml', '.json', '.jsonl'];

/** A workflow's sample inputs: every `.eml`, `.json` and `.jsonl` file of its `samples/` folder. */
const samplesOf = (workflow: string) => join(loadWorkflow(workflow).dir, 'samples');

/** `2 workflows: order-check (3 input files), refund-desk (1)`: exactly what the demo is about to run. */
function plan(inputs: ReadonlyMap<string, string[]>): string {
  const parts = [...inputs].map(
    ([w, files], i) => `${w} (${files.length}${i === 0 ? ` input file${files.length === 1 ? '' : 's'}` : ''})`,
  );
  return `${inputs.size} workflow${inputs.size === 1 ? '' : 's'}: ${parts.join(', ')}`;
}

export function register(program: Command): void {
  const command = program
    .command('demo')
    .description(
      'Run the sample inputs of workflows (every .eml, .json and .jsonl file of their samples/ folder) on the local runtime, ' +
        'one fresh session per workflow, and print one line per input: its status and step trail. No AWS account needed. ' +
        'An execution that pauses at a checkpoint is not kept (stepwise run keeps it for stepwise resume).',
    )
    .argument('[workflows...]', 'workflows to demo (default: every workflow with a samples/ folder)')
    .addOption(modelOption())
    .addOption(envOption('whose stacks run locally'))
    .option(
      '--json',
      'print { workflows: [{ workflow, results }] } (results as stepwise run --json prints them), nothing else on stdout',
    )
    .addOption(verboseOption());
  awsOptions(command, 'for --model bedrock');
  withExamples(command, ['stepwise demo', 'stepwise demo support-desk --json']);
  command.action(
    action(async (requested: string[], flags: DemoFlags) => {
      const workflows = requested.length ? requested : listWorkflows().filter((w) => existsSync(samplesOf(w)));
      if (workflows.length === 0) throw new InvalidInputError('no workflow has a samples/ folder');
      const inputs = new Map(workflows.map((w) => [w, expandInputPaths([samplesOf(w)], SAMPLE_FILES)]));
      const started = Date.now();
      if (!flags.json)
        process.stdout.write(
          `Stepwise demo: the sample inputs of ${plan(inputs)}, through the synthesized ASL on the local runtime ` +
            `(DynamoDB Local), model: ${modelLabel(flags.model)}.\n`,
        );
      const all: { workflow: string; results: RunResult[] }[] = [];
      for (const [workflow, files] of inputs) {
        const results = await withCleanStdout(async () => {
          // Paused executions stay in this process: the demo leaves nothing waiting behind.
          const session = await WorkflowSession.start({
            workflow,
            env: flags.env,
            model: flags.model,
            logLevel: logLevelFor(flags),
            pausesDir: false,
          });
          const progress = progressLine();
          try {
            return await session.runFiles(files, (r, i, n) =>
              progress.update(`${workflow} [${i + 1}/${n}] ${r.status}`),
            );
          } finally {
            progress.clear();
            await session.close();
          }
        });
        all.push({ workflow, results });
        if (!flags.json)
          process.stdout.write(`\n${workflow} (statemachines/${workflow}/samples/)\n${briefResults(results)}\n`);
      }
      const results = all.flatMap((w) => w.results);
      process.exitCode = runExitCode(results);
      if (flags.json) return printJson({ workflows: all });
      // Point at the longest trail: it shows the most of the history view.
      const longest = results
        .filter((r) => r.executionName && r.steps.length)
        .sort((a, b) => b.steps.length - a.steps.length)[0];
      const lines = [`\nDone in ${((Date.now() - started) / 1000).toFixed(1)} s: ${results.length} inputs.`];
      if (longest)
        lines.push(
          `Step trails are kept in ${relative(process.cwd(), DEFAULT_HISTORY_DIR) || DEFAULT_HISTORY_DIR}/; show one with: npx stepwise history ${longest.executionName}`,
        );
      process.stdout.write(`${lines.join('\n')}\n`);
    }),
  );
}
