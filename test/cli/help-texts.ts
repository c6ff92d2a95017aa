/**
 * A script, not a test (help-examples.test.ts runs it in a project of its own): prints as JSON the help of
 * `stepwise` and of every command and subcommand the program has in the project of the working directory,
 * examples included, by command path (`""` is `stepwise --help`).
 */
import type { Command } from 'commander';
import { createProgram } from '../../src/cli/program.ts';

const helpOf = (command: Command): string => {
  let help = '';
  command.configureOutput({ writeOut: (text) => (help += text) });
  command.outputHelp();
  return help;
};

const walk = (command: Command, path: string[]): [string, string][] => [
  [path.join(' '), helpOf(command)],
  ...command.commands.flatMap((sub) => walk(sub, [...path, sub.name()])),
];

process.stdout.write(JSON.stringify(Object.fromEntries(walk(await createProgram(), []))));
