/**
 * The `stepwise` command line as a commander program. Every file in `commands/` exports
 * `register(program)`: adding a command is adding a file. A project's workflow may add commands
 * the same way, from `lambdas/workflows/<workflow>/cli.ts`.
 */
import { existsSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Command } from 'commander';
import { ENGINE_MODULE_EXTENSION, PROJECT_ROOT, STEPWISE_VERSION, WORKFLOW_CODE_DIR } from '../core/paths.ts';
import { importProjectModule } from '../core/project-modules.ts';

/** The folder of the built-in commands, one module each. */
export const COMMANDS_DIR = join(dirname(fileURLToPath(import.meta.url)), 'commands');

/** The installed Stepwise version. */
export const VERSION = STEPWISE_VERSION;

/** A command module: it adds its command(s) to the program. */
interface CommandModule {
  register(program: Command): void;
}

/** The program with no command yet: name, description, version, and errors left to the caller (see main.ts). */
export function baseProgram(): Command {
  return (
    new Command('stepwise')
      .description('Step workflows on AWS Step Functions, runnable locally with no AWS account.')
      .version(VERSION, '-V, --version', 'print the Stepwise version')
      // Usage errors become one line (and a JSON error object with --json) instead of commander's help dump.
      .exitOverride()
      .configureOutput({ outputError: () => undefined })
  );
}

/** The built-in command modules: `<name>` → file. */
export function builtInCommandFiles(): Record<string, string> {
  return Object.fromEntries(
    readdirSync(COMMANDS_DIR)
      .filter((f) => f.endsWith(ENGINE_MODULE_EXTENSION) && !f.endsWith('.d.ts'))
      .sort()
      .map((f) => [f.slice(0, -ENGINE_MODULE_EXTENSION.length), join(COMMANDS_DIR, f)]),
  );
}

/** Add the built-in command module `file` to `program`. */
export async function registerCommandFile(program: Command, file: string): Promise<void> {
  ((await import(pathToFileURL(file).href)) as CommandModule).register(program);
}

/** The project's workflow CLI extensions (`lambdas/workflows/<workflow>/cli.*`), without extension. */
export function extensionModules(): string[] {
  if (!existsSync(WORKFLOW_CODE_DIR)) return [];
  return readdirSync(WORKFLOW_CODE_DIR, { withFileTypes: true })
    .filter(
      (d) =>
        d.isDirectory() &&
        ['.ts', '.mts', '.js', '.mjs'].some((ext) => existsSync(join(WORKFLOW_CODE_DIR, d.name, `cli${ext}`))),
    )
    .map((d) => join(WORKFLOW_CODE_DIR, d.name, 'cli'));
}

/** Every command: the built-in ones, then the project's workflow extensions. */
export async function createProgram(): Promise<Command> {
  const program = baseProgram();
  for (const file of Object.values(builtInCommandFiles())) await registerCommandFile(program, file);
  return registerExtensions(program);
}

/** `program` with the project's own commands added. */
export async function registerExtensions(program: Command): Promise<Command> {
  for (const extension of extensionModules())
    (await importProjectModule<CommandModule>(extension, PROJECT_ROOT))!.register(program);
  return program;
}

/** What the package build writes beside main.js, so startup need not load every command. */
export interface CommandIndex {
  /** Command name (and alias) → module file name in `commands/`. */
  readonly commands: Readonly<Record<string, string>>;
  /** `stepwise --help` with the built-in commands. */
  readonly help: string;
}

/** The command index's file name, beside main.js. */
export const COMMAND_INDEX_FILE = 'commands.json';

/** The {@link CommandIndex} of the built-in commands (the package build writes it). */
export async function commandIndex(): Promise<CommandIndex> {
  const program = baseProgram();
  const commands: Record<string, string> = {};
  for (const [name, file] of Object.entries(builtInCommandFiles())) {
    const before = program.commands.length;
    await registerCommandFile(program, file);
    for (const command of program.commands.slice(before))
      for (const alias of [command.name(), ...command.aliases()]) commands[alias] = `${name}${ENGINE_MODULE_EXTENSION}`;
  }
  return { commands, help: program.helpInformation() };
}
