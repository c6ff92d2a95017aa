import type { Command } from 'commander';
import { listWorkflows } from '../../../lambdas/lib/workflow/loader.ts';
import { validateWorkflow } from '../../../lambdas/lib/workflow/validate.ts';
import { envOption } from '../aws-options.ts';
import { withExamples } from '../help.ts';
import { action, printJson } from '../output.ts';

export function register(program: Command): void {
  const command = program
    .command('validate')
    .description(
      'Check a workflow (every workflow when omitted) without running it: graph and frontmatter, input schema, code steps ' +
        'and tools resolve, bound tool arguments exist, offline-model rules route only along declared edges, eval cases ' +
        'parse and fit. The first problem is one line naming the file and field; exit code 1.',
    )
    .argument('[workflow]', 'a workflow of statemachines/')
    .addOption(envOption('whose config may override the model'))
    .option('--json', 'print { workflows: [{ workflow, steps, tools, offlineRules, evalCases, warnings }] }');
  withExamples(command, ['stepwise validate', 'stepwise validate tool-loop --json']);
  command.action(
      action(async (workflow: string | undefined, opts: { json?: boolean; env: string }) => {
        const names = workflow === undefined ? listWorkflows() : [workflow];
        const checked = [];
        for (const name of names) {
          const { counts, warnings } = await validateWorkflow(name, undefined, { env: opts.env });
          checked.push({ workflow: name, ...counts, warnings });
        }
        if (opts.json) return printJson({ workflows: checked });
        for (const c of checked) {
          process.stdout.write(`✓ ${c.workflow}: ${c.steps} steps, ${c.tools} tools, ${c.offlineRules} offline rules, ${c.evalCases} eval cases\n`);
          for (const w of c.warnings) process.stdout.write(`  warning: ${w}\n`);
        }
      }),
    );
}
