import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Command, CommanderError } from 'commander';
import { StepwiseError } from '../../lambdas/lib/errors.ts';
import { WORKFLOW_CODE_DIR } from '../../lambdas/lib/project.ts';
import { fail } from './output.ts';

/**
 * Every file in `commands/` exports `register(program)`; adding a command is adding a file. A
 * workflow may add its own commands the same way, from `lambdas/workflows/<workflow>/cli.ts`.
 * Failures print one line on stderr and exit non-zero (see `fail` in ./output.ts); usage errors too.
 */
const here = dirname(fileURLToPath(import.meta.url));
const { version } = JSON.parse(readFileSync(join(here, '../../package.json'), 'utf8')) as { version: string };

/** A command line commander refused (unknown option, missing argument). */
class UsageError extends StepwiseError {}

const program = new Command('stepwise')
  .description('Step workflows on AWS Step Functions, runnable locally with no AWS account.')
  .version(version, '-V, --version', 'print the Stepwise version')
  // Usage errors become one line (and a JSON error object with --json) instead of commander's help dump.
  .exitOverride()
  .configureOutput({ outputError: () => undefined });

const commandDir = join(here, 'commands');
const modules = [
  ...readdirSync(commandDir).filter((f) => f.endsWith('.ts')).sort().map((f) => join(commandDir, f)),
  ...readdirSync(WORKFLOW_CODE_DIR, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => join(WORKFLOW_CODE_DIR, d.name, 'cli.ts'))
    .filter((f) => existsSync(f)),
];
for (const file of modules) {
  const mod = await import(pathToFileURL(file).href);
  mod.register(program);
}
try {
  await program.parseAsync();
} catch (e) {
  if (!(e instanceof CommanderError)) fail(e);
  // --help, --version and the help shown for a missing command end with a CommanderError too; they printed already.
  if (e.exitCode === 0 || e.code === 'commander.help' || e.code === 'commander.helpDisplayed') process.exit(e.exitCode);
  fail(new UsageError(`${e.message.replace(/^error: /, '')} (see stepwise ${process.argv[2] && !process.argv[2].startsWith('-') ? `${process.argv[2]} ` : ''}--help)`));
}
