/**
 * The `stepwise` CLI. Startup loads only what the command line needs: `--version` and `--help`
 * build no command (the help of the built-in commands is written into the package at build time),
 * a built-in command imports its own module only, and a project's own command the project's extensions only.
 * Anything else (an unknown command, help with extensions) loads every command.
 *
 * Exit codes: 0 success, 1 failure, 2 usage error (an unknown command or option, a missing
 * argument). Every error is one line on stderr; with `--json`, a JSON error object on stdout too.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Command, CommanderError } from 'commander';
import { editDistance as distance } from '../core/did-you-mean.ts';
import { StepwiseError } from '../core/errors.ts';
import { nodeVersionWarning } from './node-version.ts';
import { fail } from './output.ts';
import {
  baseProgram,
  COMMAND_INDEX_FILE,
  type CommandIndex,
  createProgram,
  extensionModules,
  registerCommandFile,
  registerExtensions,
} from './program.ts';

/** A command line commander refused (unknown command or option, missing argument): exit code 2. */
class UsageError extends StepwiseError {}

const INDEX_FILE = join(dirname(fileURLToPath(import.meta.url)), COMMAND_INDEX_FILE);
const index: CommandIndex | undefined = existsSync(INDEX_FILE)
  ? JSON.parse(readFileSync(INDEX_FILE, 'utf8'))
  : undefined;

/**
 * The usage error for an unknown command in `argv` (at the top or under a command group such as
 * `lifecycle`): the nearest command of that group when one is close, else the group's commands.
 */
function unknownCommand(program: Command, argv: readonly string[]): UsageError {
  let group = program;
  let path = 'stepwise';
  let i = 0;
  for (; i < argv.length; i++) {
    const sub = group.commands.find((c) => c.name() === argv[i] || c.aliases().includes(argv[i]!));
    if (!sub) break;
    group = sub;
    path += ` ${sub.name()}`;
  }
  const name = String(argv[i]);
  const names = group.commands.flatMap((c) => [c.name(), ...c.aliases()]).filter((n) => n !== 'help');
  const nearest = names.map((n) => ({ n, d: distance(name, n) })).sort((a, b) => a.d - b.d)[0];
  const hint =
    nearest && nearest.d <= Math.max(2, Math.floor(name.length / 3))
      ? `did you mean "${path} ${nearest.n}"?`
      : `commands: ${names.sort().join(', ')}`;
  return new UsageError(`unknown command "${name}" (${hint})`);
}

/** The program for this command line: as few commands as it needs. */
async function programFor(argv: readonly string[]): Promise<Command | undefined> {
  const [first] = argv;
  const local = index?.commands ?? {};
  if (first !== undefined && Object.hasOwn(local, first)) {
    const program = baseProgram();
    await registerCommandFile(program, join(dirname(INDEX_FILE), 'commands', local[first]!));
    return program;
  }
  const helpOnly = first === undefined || first === '-h' || first === '--help';
  if (index && helpOnly && extensionModules().length === 0) {
    // What commander prints: help on stdout when asked for, on stderr (exit 1) when no command was given.
    if (first === undefined) process.stderr.write(index.help);
    else process.stdout.write(index.help);
    process.exit(first === undefined ? 1 : 0);
  }
  if (first === '-V' || first === '--version') return baseProgram();
  // A project's own command (`stepwise lead …`) needs its extensions only, not every built-in command's module.
  if (index && first !== undefined && !first.startsWith('-') && extensionModules().length > 0) {
    const program = await registerExtensions(baseProgram());
    if (program.commands.some((c) => c.name() === first || c.aliases().includes(first))) return program;
  }
  return createProgram();
}

// Once per command, before anything else can fail for the same reason (STEPWISE_NODE_WARNING=off silences it: this
// repository's own suite runs on the machine's Node 20).
const unsupported = nodeVersionWarning(process.versions.node);
if (unsupported && process.env.STEPWISE_NODE_WARNING !== 'off') process.stderr.write(unsupported);
// Commands reuse the warm local service (DynamoDB Local outliving one command) unless it is turned off.
process.env.STEPWISE_LOCAL_SERVICE ??= 'on';
const argv = process.argv.slice(2);
const program = await programFor(argv);
try {
  await program!.parseAsync();
} catch (e) {
  if (!(e instanceof CommanderError)) fail(e);
  // --help, --version and the help shown for a missing command end with a CommanderError too; they printed already.
  if (e.exitCode === 0 || e.code === 'commander.help' || e.code === 'commander.helpDisplayed') process.exit(e.exitCode);
  if (e.code === 'commander.unknownCommand') fail(unknownCommand(program!, argv), 2);
  const command = argv[0] && !argv[0].startsWith('-') ? `${argv[0]} ` : '';
  fail(new UsageError(`${e.message.replace(/^error: /, '').split('\n')[0]} (see stepwise ${command}--help)`), 2);
}
