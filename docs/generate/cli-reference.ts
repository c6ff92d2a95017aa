/**
 * The CLI reference (docs/reference/cli.md) from the commander program itself: every command's
 * usage, description, arguments, options and examples, as `stepwise <command> --help` shows them.
 */

import { relative, sep } from 'node:path';
import type { Argument, Command, Help, Option } from 'commander';
import { examplesOf } from '../../src/cli/help.ts';
import { PROJECT_ROOT } from '../../src/core/paths.ts';

/** A default as the page shows it: a path in the project relative to it, so the page is the same on every machine. */
const shown = (value: unknown) => {
  const text = String(value);
  return text.startsWith(PROJECT_ROOT + sep) ? relative(PROJECT_ROOT, text) : text;
};

/** Text for markdown: `<name>` outside code would be read as an HTML tag. */
const escapeHtml = (text: string) => text.replaceAll('<', '&lt;').replaceAll('>', '&gt;');
const cell = (text: string) => escapeHtml(text).replaceAll('|', '\\|').replaceAll('\n', ' ');

function optionRow(help: Help, option: Option): string {
  const choices = option.argChoices ? ` One of: ${option.argChoices.map((c) => `\`${c}\``).join(', ')}.` : '';
  const fallback =
    option.defaultValue !== undefined && typeof option.defaultValue !== 'object'
      ? `\`${shown(option.defaultValue)}\``
      : '';
  return `| \`${help.optionTerm(option)}\` | ${cell(option.description)}${choices} | ${fallback} |`;
}

const argumentRow = (help: Help, argument: Argument) =>
  `| \`${help.argumentTerm(argument)}\` | ${cell(argument.description)} |`;

/** Every command with subcommands flattened: `lead replay`, `registry import`. */
function leaves(command: Command, prefix: string[] = []): { path: string[]; command: Command }[] {
  return command.commands.flatMap((c) => {
    const path = [...prefix, c.name()];
    return c.commands.length ? leaves(c, path) : [{ path, command: c }];
  });
}

function commandSection(help: Help, path: string[], command: Command): string {
  const args = help.visibleArguments(command);
  const options = help.visibleOptions(command).filter((o) => o.long !== '--help');
  const examples = examplesOf(command);
  return [
    `## stepwise ${path.join(' ')}`,
    '',
    '```text',
    help.commandUsage(command),
    '```',
    '',
    escapeHtml(command.description()),
    ...(args.length
      ? ['', '| Argument | Description |', '| --- | --- |', ...args.map((a) => argumentRow(help, a))]
      : []),
    ...(options.length
      ? ['', '| Option | Description | Default |', '| --- | --- | --- |', ...options.map((o) => optionRow(help, o))]
      : []),
    ...(examples.length ? ['', 'Examples:', '', '```bash', ...examples, '```'] : []),
    '',
  ].join('\n');
}

/** The markdown reference of every command of `program`. */
export function cliReference(program: Command): string {
  const help = program.createHelp();
  return leaves(program)
    .map(({ path, command }) => commandSection(help, path, command))
    .join('\n');
}
