import type { Command } from 'commander';
import * as z from 'zod';
import { InvalidInputError } from '../../core/errors.ts';
import { DEFAULT_PAUSES_DIR, isExecutionName, PauseStore, type Resolution } from '../../local/records/pauses.ts';
import { pauseSummary, resumePaused } from '../../local/sessions/workflow-session.ts';
import { awsOptions, envOption } from '../aws-options.ts';
import { withExamples } from '../help.ts';
import { action, printJson } from '../output.ts';
import {
  formatResults,
  logLevelFor,
  modelOption,
  runExitCode,
  type SessionFlags,
  verboseOption,
  withCleanStdout,
} from '../session-output.ts';

interface ResumeFlags extends SessionFlags {
  env: string;
  output?: string;
  fail?: string;
  error: string;
  heartbeat?: boolean;
  dir: string;
  json?: boolean;
}

/** `--output` is any JSON value, as `SendTaskSuccess --task-output` takes. */
const Output = z.string().transform((text, ctx) => {
  try {
    return JSON.parse(text) as unknown;
  } catch (e) {
    ctx.addIssue({ code: 'custom', message: `--output is not JSON: ${(e as Error).message}` });
    return z.NEVER;
  }
});

/** Exactly one of --output, --fail, --heartbeat. */
function resolution(flags: ResumeFlags): Resolution | 'heartbeat' {
  const given = [flags.output !== undefined, flags.fail !== undefined, Boolean(flags.heartbeat)].filter(Boolean).length;
  if (given !== 1) throw new InvalidInputError('give exactly one of --output JSON, --fail REASON, --heartbeat');
  if (flags.heartbeat) return 'heartbeat';
  if (flags.fail !== undefined) return { error: flags.error, cause: flags.fail };
  const parsed = Output.safeParse(flags.output);
  if (!parsed.success) throw new InvalidInputError(parsed.error.issues[0]!.message);
  return { output: parsed.data };
}

export function register(program: Command): void {
  const command = program
    .command('resume')
    .description(
      'Resume a local execution paused at a checkpoint, in a new session, through the same synthesized ASL: --output JSON ' +
        'is SendTaskSuccess (the next step reads it as data.checkpoint), --fail REASON is SendTaskFailure (caught to the ' +
        'fallback), --heartbeat is SendTaskHeartbeat. Past the checkpoint’s deadline the execution resumes into its ' +
        'timeout path (the escalation step) whatever was sent. One resumer runs it: a concurrent resume of the same execution is ' +
        'refused. Prints the result like run; exit 1 when it FAILED.',
    )
    .argument('<execution>', 'the execution name (stepwise executions lists them)')
    .option('--output <json>', 'the checkpoint’s output (SendTaskSuccess --task-output)')
    .option('--fail <reason>', 'reject the checkpoint (SendTaskFailure --cause)')
    .option('--error <name>', 'the error name of --fail (SendTaskFailure --error)', 'CheckpointRejected')
    .option('--heartbeat', 'restart the heartbeat timeout (SendTaskHeartbeat)')
    .option('--dir <dir>', 'where paused executions are kept', DEFAULT_PAUSES_DIR)
    .addOption(modelOption())
    .addOption(envOption('whose stack runs locally'))
    .option('--json', 'print the result as JSON')
    .addOption(verboseOption());
  awsOptions(command, 'for --model bedrock');
  withExamples(command, [
    'stepwise resume EXECUTION --heartbeat',
    `stepwise resume EXECUTION --output '{"notes":"the 14:01 deploy disabled the CDN cache"}'`,
  ]);
  command.action(
    action(async (execution: string, flags: ResumeFlags) => {
      // Before any file is read: the name becomes a path under --dir.
      if (!isExecutionName(execution))
        throw new InvalidInputError(
          `"${execution}" is not an execution name (stepwise executions lists the paused ones)`,
        );
      const how = resolution(flags);
      if (how === 'heartbeat') {
        const summary = pauseSummary(new PauseStore(flags.dir).heartbeat(execution));
        return flags.json
          ? printJson(summary)
          : void process.stdout.write(`${execution}: heartbeat recorded; times out at ${summary.deadline}\n`);
      }
      const result = await withCleanStdout(() =>
        resumePaused(execution, how, {
          env: flags.env,
          model: flags.model,
          logLevel: logLevelFor(flags),
          pausesDir: flags.dir,
        }),
      );
      if (flags.json) printJson(result);
      else process.stdout.write(formatResults([result]));
      process.exitCode = runExitCode([result]);
    }),
  );
}
