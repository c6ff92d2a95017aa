/** The commands of a commander program, for tests that check what every command follows. */
import type { Command } from 'commander';

/** Every leaf command of `program` by its full name (`lifecycle replay`, `member show`). */
export function commandLeaves(program: Command): Map<string, Command> {
  const leaves = (c: Command, prefix: string[] = []): [string, Command][] =>
    c.commands.flatMap((sub) =>
      sub.commands.length
        ? leaves(sub, [...prefix, sub.name()])
        : [[[...prefix, sub.name()].join(' '), sub] as [string, Command]],
    );
  return new Map(leaves(program));
}

/** The long names of a command's options. */
export const longFlags = (command: Command): (string | undefined)[] => command.options.map((o) => o.long);
