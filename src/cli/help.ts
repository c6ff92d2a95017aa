import type { Command } from 'commander';

const examples = new WeakMap<Command, readonly string[]>();

/**
 * Add an Examples section to a command's help (after the options, as the CDK and SAM CLIs show
 * theirs); the CLI reference (docs/reference/cli.md) prints the same lines. Each example runs in
 * the reader's project: it names the workflow `stepwise new` starts a project with (`support-desk`,
 * which `stepwise init support-desk` adds to any project), or a placeholder (`<workflow>`) where
 * that workflow does not fit; never an example workflow of the Stepwise repository.
 */
export function withExamples(command: Command, lines: readonly string[]): Command {
  examples.set(command, lines);
  return command.addHelpText('after', `\nExamples:\n${lines.map((l) => `  $ ${l}`).join('\n')}\n`);
}

/** The examples given to {@link withExamples}, for the generated reference. */
export const examplesOf = (command: Command): readonly string[] => examples.get(command) ?? [];
