import type { Command } from 'commander';
import { InvalidInputError } from '../../core/errors.ts';
import { DEFINITION_KINDS, definitionJsonSchema } from '../../definitions/kinds.ts';
import { definitionReference } from '../../definitions/reference.ts';
import { withExamples } from '../help.ts';
import { action, printJson } from '../output.ts';

export function register(program: Command): void {
  const command = program
    .command('reference')
    .description(
      'Print the field reference of the definition files (markdown tables), generated from the schemas the loaders validate with: ' +
        `${DEFINITION_KINDS.map((k) => k.name).join(', ')}.`,
    )
    .argument('[kind]', 'one kind of file (default: all)')
    .option('--json', 'print the JSON Schemas instead, keyed by kind (what docs/schemas/ holds)');
  withExamples(command, ['stepwise reference workflow', 'stepwise reference eval-case --json']);
  command.action(
    action((kind: string | undefined, opts: { json?: boolean }) => {
      const kinds = DEFINITION_KINDS.filter((k) => kind === undefined || k.name === kind);
      if (kinds.length === 0)
        throw new InvalidInputError(
          `unknown kind "${kind}" (known: ${DEFINITION_KINDS.map((k) => k.name).join(', ')})`,
        );
      if (opts.json) printJson(Object.fromEntries(kinds.map((k) => [k.name, definitionJsonSchema(k)])));
      else process.stdout.write(definitionReference(kinds));
    }),
  );
}
