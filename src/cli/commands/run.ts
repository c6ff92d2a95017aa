import { basename } from 'node:path';
import { type Command, Option } from 'commander';
import { InvalidInputError } from '../../core/errors.ts';
import { isEmailWorkflow } from '../../definitions/workflow/input.ts';
import type { WorkflowDefinition } from '../../definitions/workflow/schema.ts';
import { exportExecution, otlpTracesUrl } from '../../local/records/otlp.ts';
import type { RunResult } from '../../local/sessions/run-result.ts';
import { RUN_MODE_ALIASES, RUN_MODES, type RunMode, runsSinglePrompt } from '../../local/sessions/single-prompt.ts';
import { expandInputPaths, WorkflowSession } from '../../local/sessions/workflow-session.ts';
import { validateWorkflow } from '../../project/validate.ts';
import { awsOptions, envOption } from '../aws-options.ts';
import { withExamples } from '../help.ts';
import { action, printJson } from '../output.ts';
import {
  choicesWithAliases,
  formatResults,
  localEnvOption,
  logLevelFor,
  modelLabel,
  modelOption,
  openAiEndpoint,
  openAiOptions,
  progressLine,
  repeatable,
  runExitCode,
  type SessionFlags,
  verboseOption,
  withCleanStdout,
} from '../session-output.ts';
import { watchAndRerun, watchOption, workflowFolders } from '../watch.ts';

interface RunFlags extends SessionFlags {
  env: string;
  input?: string[];
  email?: string[];
  localEnv?: Record<string, string>;
  json?: boolean;
  watch?: boolean;
  otlp?: string;
  mode: RunMode;
}

/** Each execution's trace to the collector at `url` (none without one). */
async function exportTraces(
  url: string | undefined,
  results: readonly RunResult[],
  session: WorkflowSession,
  def: WorkflowDefinition,
): Promise<void> {
  if (!url) return;
  for (const r of results) {
    const record = r.executionName ? session.execution(r.executionName) : undefined;
    if (record) await exportExecution(url, record, def);
  }
}

/** The header's note of `--mode single-prompt`; nothing for the default. */
const modeLabel = (flags: RunFlags) => (runsSinglePrompt(flags.mode) ? ', mode: single-prompt' : '');

/** `--mode steps|single-prompt` (`monolithic`, the old name, too). */
const modeOption = () =>
  choicesWithAliases(
    new Option(
      '--mode <mode>',
      "steps: the state machine; single-prompt: the workflow's single-prompt agent (what the rollback switches mail to: one LLM step with every tool, behind the steps' guard and bound arguments; needs --model bedrock or openai; `monolithic` is its old name), its one step `monolithic` in the trail",
    ),
    RUN_MODES,
    RUN_MODE_ALIASES,
  ).default('steps');

export function register(program: Command): void {
  const command = program
    .command('run')
    .description(
      'Run a workflow locally, in one session (one DynamoDB Local), through the synthesized ASL: each --input is started ' +
        'directly (checked against the workflow’s input schema), each --email goes through the real email ingress (a ' +
        'repeated Message-ID is a DUPLICATE). Prints each input’s step trail and what it sent; --json prints one array, an ' +
        'object per input in order, with usage (model calls and tokens) per input and per step. Exit code 1 when an ' +
        'execution FAILED, an input is missing or an input is REJECTED by the input schema (the JSON is still printed); ' +
        'mail the ingress refuses (REJECTED), DUPLICATE and PAUSED (waiting at a checkpoint for stepwise resume) are ' +
        'normal outcomes (exit 0).',
    )
    .argument('<workflow>', 'a workflow of statemachines/')
    .option(
      '--input <file-or-dir>',
      'a .json input (one object) or .jsonl (one per line), or a directory of them, sorted (repeatable)',
      repeatable,
    )
    .option(
      '--email <file-or-dir>',
      'email workflows: an .eml file, or a directory: every *.eml in it, sorted (repeatable)',
      repeatable,
    )
    .addOption(localEnvOption())
    .addOption(modelOption())
    .addOption(envOption('whose stack runs locally'))
    .addOption(openAiOptions()[0]!)
    .addOption(openAiOptions()[1]!)
    .addOption(modeOption())
    .option('--json', 'print the results as one JSON array, nothing else on stdout')
    .option(
      '--otlp <url>',
      'export each execution as an OpenTelemetry trace over OTLP/HTTP to this collector (default: OTEL_EXPORTER_OTLP_ENDPOINT)',
    )
    .addOption(verboseOption())
    .addOption(watchOption());
  awsOptions(command, 'for --model bedrock');
  withExamples(command, [
    'stepwise run support-desk --input statemachines/support-desk/samples/billing-question.json',
    'stepwise run support-desk --input statemachines/support-desk/samples --mode single-prompt --model bedrock',
    'stepwise run <workflow> --email statemachines/<workflow>/samples',
  ]);
  command.action(
    action(async (workflow: string, flags: RunFlags) => {
      const { plugin } = await validateWorkflow(workflow, undefined, { evalCases: false });
      const files = [...expandInputPaths(flags.input ?? []), ...expandInputPaths(flags.email ?? [], ['.eml'])];
      if (files.length === 0)
        throw new InvalidInputError(
          `give at least one ${isEmailWorkflow(plugin.def) ? '--email FILE_OR_DIR' : '--input FILE_OR_DIR'}`,
        );
      if (flags.watch) return watchAndRerun(workflowFolders(plugin.def));
      process.stderr.write(`stepwise run: ${workflow}, model: ${modelLabel(flags.model, flags)}${modeLabel(flags)}\n`);
      const results = await withCleanStdout(async () => {
        const session = await WorkflowSession.start({
          workflow,
          env: flags.env,
          model: flags.model,
          openai: openAiEndpoint(flags),
          localEnv: flags.localEnv,
          logLevel: logLevelFor(flags),
          mode: flags.mode,
        });
        const progress = progressLine();
        try {
          const ran = await session.runFiles(files, (r, i, n) =>
            progress.update(`[${i + 1}/${n}] ${basename(r.file)} ${r.status}`),
          );
          await exportTraces(otlpTracesUrl(flags.otlp), ran, session, plugin.def);
          return ran;
        } finally {
          progress.clear();
          await session.close();
        }
      });
      if (flags.json) printJson(results);
      else process.stdout.write(formatResults(results));
      process.exitCode = runExitCode(results);
    }),
  );
}
