import type { Command } from 'commander';
import { STATEMACHINES_DIR } from '../../core/paths.ts';
import {
  listAgentConfigs,
  listLifecycles,
  loadAgentConfig,
  loadLifecycle,
} from '../../definitions/lifecycle/loader.ts';
import { listWorkflows } from '../../definitions/workflow/loader.ts';
import { projectEnvironment } from '../../project/project.ts';
import { validateWorkflow } from '../../project/validate.ts';
import { envOption } from '../aws-options.ts';
import { withExamples } from '../help.ts';
import { action, paintStatus, printJson } from '../output.ts';

/** A lifecycle's statechart and every agent config of it. */
function validateLifecycle(name: string) {
  const def = loadLifecycle(name);
  const agents = listAgentConfigs(name);
  for (const agent of agents) loadAgentConfig(agent, name);
  return { lifecycle: name, states: Object.keys(def.states).length, agentConfigs: agents.length };
}

export function register(program: Command): void {
  const command = program
    .command('validate')
    .description(
      'Check a workflow or lifecycle (every one when omitted) without running it: graph and frontmatter, input schema, the ' +
        'model id, code steps and tools resolve, bound tool arguments exist, offline-model rules route only along declared ' +
        "edges and read what the step sees, eval cases parse and fit; a lifecycle's statechart and agent configs. A field " +
        'this version does not know is an error too. The first problem is one line naming the file and field; exit code 1.',
    )
    .argument('[name]', 'a workflow or lifecycle of statemachines/')
    .addOption(envOption('whose config may override the model'))
    .option(
      '--json',
      'print { workflows: [{ workflow, steps, tools, offlineRules, evalCases, warnings }], lifecycles: [{ lifecycle, states, agentConfigs }] }',
    );
  withExamples(command, ['stepwise validate --env dev', 'stepwise validate support-desk --json']);
  command.action(
    action(async (name: string | undefined, opts: { json?: boolean; env: string }) => {
      const lifecycles = listLifecycles(STATEMACHINES_DIR).filter((l) => name === undefined || l === name);
      const names = name === undefined ? listWorkflows() : lifecycles.length ? [] : [name];
      const workflows = [];
      for (const workflow of names) {
        const { counts, warnings } = await validateWorkflow(workflow, undefined, {
          environment: await projectEnvironment(opts.env, { allowPlaceholders: true }),
        });
        workflows.push({ workflow, ...counts, warnings });
      }
      const checked = lifecycles.map(validateLifecycle);
      if (opts.json) return printJson({ workflows, lifecycles: checked });
      for (const c of workflows) {
        process.stdout.write(
          `${paintStatus('✓')} ${c.workflow}: ${c.steps} steps, ${c.tools} tools, ${c.offlineRules} offline rules, ${c.evalCases} eval cases\n`,
        );
        for (const w of c.warnings) process.stdout.write(`  warning: ${w}\n`);
      }
      for (const l of checked)
        process.stdout.write(
          `${paintStatus('✓')} ${l.lifecycle}: ${l.states} states, ${l.agentConfigs} agent configs\n`,
        );
    }),
  );
}
