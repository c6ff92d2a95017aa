import { resolve } from 'node:path';
import type { Command } from 'commander';
import { loadWorkflow, loadWorkflowFrom, STATEMACHINES_DIR } from '../../../lambdas/lib/workflow/loader.ts';
import { workflowToMermaid } from '../../../lambdas/lib/workflow/mermaid.ts';
import type { WorkflowDefinition } from '../../../lambdas/lib/workflow/schema.ts';
import { action, printJson } from '../output.ts';

/** A workflow by name (under `STATEMACHINES_DIR`, default `statemachines/`) or by folder path (anything with a slash). */
function loadWorkflowArg(nameOrPath: string): WorkflowDefinition {
  return /[\\/]/.test(nameOrPath)
    ? loadWorkflowFrom(resolve(nameOrPath))
    : loadWorkflow(nameOrPath, process.env.STATEMACHINES_DIR || STATEMACHINES_DIR);
}

export function register(program: Command): void {
  program
    .command('graph')
    .description('Print a workflow as a Mermaid state diagram: declared routes, LLM vs code steps, the fallback.')
    .argument('<workflow>', 'workflow name (a folder of statemachines/) or a path to a workflow folder')
    .option('--json', 'print { workflow, mermaid } as JSON')
    .action(
      action((workflow: string, opts: { json?: boolean }) => {
        const def = loadWorkflowArg(workflow);
        const mermaid = workflowToMermaid(def);
        if (opts.json) printJson({ workflow: def.manifest.name, mermaid });
        else process.stdout.write(mermaid);
      }),
    );
}
