import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Command } from 'commander';
import { workflowStackName } from '../../cdk/names.ts';
import { InvalidInputError } from '../../core/errors.ts';
import { PROJECT_ROOT } from '../../core/paths.ts';
import { StepName } from '../../definitions/workflow/schema.ts';
import { withExamples } from '../help.ts';
import { action, printJson } from '../output.ts';
import { workflowFiles } from '../project-template.ts';

export function register(program: Command): void {
  const command = program
    .command('init')
    .description(
      'Scaffold a runnable workflow: statemachines/<name>/ (manifest, an LLM and a code step each way, offline-model rules, ' +
        'a sample input, an eval case) and lambdas/workflows/<name>/ (its code steps and its own tool). validate, graph, run, ' +
        'eval, synth and cdk synth work on it at once; no engine file changes.',
    )
    .argument('<name>', 'the workflow name: lowercase letters, digits and dashes')
    .option('--json', 'print { workflow, files } as JSON');
  withExamples(command, ['stepwise init support-desk']);
  command.action(
    action((name: string, opts: { json?: boolean }) => {
      if (!StepName.safeParse(name).success || !/^[a-z]/.test(name))
        throw new InvalidInputError(
          `workflow name "${name}": lowercase letters, digits and dashes, starting with a letter`,
        );
      const files = workflowFiles(name, PROJECT_ROOT);
      if (
        existsSync(join(PROJECT_ROOT, 'statemachines', name)) ||
        existsSync(join(PROJECT_ROOT, 'lambdas/workflows', name))
      )
        throw new InvalidInputError(
          `workflow "${name}" already exists (statemachines/${name} or lambdas/workflows/${name})`,
        );
      for (const [file, text] of Object.entries(files)) {
        mkdirSync(dirname(join(PROJECT_ROOT, file)), { recursive: true });
        writeFileSync(join(PROJECT_ROOT, file), text);
      }
      if (opts.json) return printJson({ workflow: name, files: Object.keys(files) });
      process.stdout.write(
        `${Object.keys(files)
          .map((f) => `  created ${f}`)
          .join('\n')}\n\n${nextSteps(name)}\n`,
      );
    }),
  );
}

/** What to tell the user after `init`. */
function nextSteps(name: string): string {
  return [
    `Created workflow ${name} (deployed as stack ${workflowStackName(name, '<env>')}). Try:`,
    `  npx stepwise validate ${name}`,
    `  npx stepwise graph ${name}`,
    `  npx stepwise run ${name} --input statemachines/${name}/samples`,
    `  npx stepwise eval ${name}`,
    `  npx cdk synth -c env=dev ${workflowStackName(name, 'dev')}`,
  ].join('\n');
}
