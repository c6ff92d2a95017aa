import type { Command } from 'commander';
import { definitionReference } from '../../../lambdas/lib/workflow/reference.ts';
import { action } from '../output.ts';

export function register(program: Command): void {
  program
    .command('reference')
    .description('Print the field reference of workflow.yaml and the step frontmatter (markdown), generated from the zod schemas the loader validates with.')
    .action(action(() => void process.stdout.write(definitionReference())));
}
