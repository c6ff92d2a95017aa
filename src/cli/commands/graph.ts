import { basename, dirname, resolve } from 'node:path';
import type { Command } from 'commander';
import { STATEMACHINES_DIR } from '../../core/paths.ts';
import { loadWorkflowFrom } from '../../definitions/workflow/loader.ts';
import { workflowToMermaid } from '../../definitions/workflow/mermaid.ts';
import type { WorkflowDefinition } from '../../definitions/workflow/schema.ts';
import { validateWorkflow } from '../../project/validate.ts';
import { withExamples } from '../help.ts';
import { action, printJson } from '../output.ts';

/**
 * A workflow by name (under `STATEMACHINES_DIR`, default `statemachines/`), validated like
 * `stepwise validate` does, or by folder path (anything with a slash): a folder outside the
 * project has no code by convention, so only its definitions are checked.
 */
async function loadWorkflowArg(nameOrPath: string): Promise<WorkflowDefinition> {
  const [name, root] = /[\\/]/.test(nameOrPath)
    ? [basename(resolve(nameOrPath)), dirname(resolve(nameOrPath))]
    : [nameOrPath, process.env.STATEMACHINES_DIR || STATEMACHINES_DIR];
  if (resolve(root) !== STATEMACHINES_DIR) return loadWorkflowFrom(resolve(nameOrPath));
  return (await validateWorkflow(name, root)).plugin.def;
}

export function register(program: Command): void {
  const command = program
    .command('graph')
    .description(
      'Validate a workflow and print it as a Mermaid state diagram: declared routes, LLM vs code steps, the fallback.',
    )
    .argument('<workflow>', 'workflow name (a folder of statemachines/) or a path to a workflow folder')
    .option('--json', 'print { workflow, mermaid } as JSON');
  withExamples(command, ['stepwise graph support-desk', 'stepwise graph support-desk --json']);
  command.action(
    action(async (workflow: string, opts: { json?: boolean }) => {
      const def = await loadWorkflowArg(workflow);
      const mermaid = workflowToMermaid(def);
      if (opts.json) printJson({ workflow: def.manifest.name, mermaid });
      else process.stdout.write(mermaid);
    }),
  );
}
