import { CommanderError } from 'commander';
import { StepwiseError } from '../../lambdas/lib/errors.ts';
import { fail } from './output.ts';
import { createProgram } from './program.ts';

/**
 * The `stepwise` CLI: the program of ./program.ts, parsed.
 * Failures print one line on stderr and exit non-zero (see `fail` in ./output.ts); usage errors too.
 */

/** A command line commander refused (unknown option, missing argument). */
class UsageError extends StepwiseError {}

const program = await createProgram();
try {
  await program.parseAsync();
} catch (e) {
  if (!(e instanceof CommanderError)) fail(e);
  // --help, --version and the help shown for a missing command end with a CommanderError too; they printed already.
  if (e.exitCode === 0 || e.code === 'commander.help' || e.code === 'commander.helpDisplayed') process.exit(e.exitCode);
  fail(new UsageError(`${e.message.replace(/^error: /, '')} (see stepwise ${process.argv[2] && !process.argv[2].startsWith('-') ? `${process.argv[2]} ` : ''}--help)`));
}
