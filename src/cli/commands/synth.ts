import type { Command } from 'commander';
import { listWorkflows } from '../../definitions/workflow/loader.ts';
import { LOCAL_ACCOUNT, LOCAL_REGION } from '../../local/cloud/intrinsics.ts';
import { synthProject } from '../../local/cloud/synth.ts';
import { projectEnvironment } from '../../project/project.ts';
import { validateWorkflow } from '../../project/validate.ts';
import { envOption } from '../aws-options.ts';
import { withExamples } from '../help.ts';
import { action, printJson } from '../output.ts';

export function register(program: Command): void {
  const command = program
    .command('synth')
    .description(
      'Validate, then synthesize the CDK app in-process and print the ASL (JSON) of a workflow as deployed. ' +
        'Outside dev, an environment with a placeholder value or no account is refused, as cdk synth refuses it. ' +
        `Tokens are resolved for readability: ARNs are placeholders (${LOCAL_REGION}, account ${LOCAL_ACCOUNT}) ending in the logical id.`,
    )
    .argument(
      '[workflow]',
      'workflow name or state machine logical id; all state machines (keyed by workflow) when omitted',
    )
    .addOption(envOption('whose stacks are synthesized'))
    .option('--json', 'print only the ASL JSON on stdout (it always is; the header line goes to stderr)');
  withExamples(command, ['stepwise synth support-desk --env dev --json']);
  command.action(
    action(async (workflow: string | undefined, opts: { env: string; json?: boolean }) => {
      // The ASL as deployed, so the environment is checked as `cdk synth` checks it: outside dev, no placeholder.
      await projectEnvironment(opts.env);
      for (const name of workflow !== undefined && listWorkflows().includes(workflow) ? [workflow] : listWorkflows())
        await validateWorkflow(name);
      const machines = (await synthProject(opts.env)).stateMachines;
      const key = (m: (typeof machines)[number]) => m.workflowName ?? `${m.stack}/${m.logicalId}`;
      if (workflow === undefined) {
        printJson(Object.fromEntries(machines.map((m) => [key(m), m.definition])));
        return;
      }
      const found = machines.find((m) => m.workflowName === workflow || m.logicalId === workflow);
      if (!found) {
        const known = machines.map(key).join(', ') || 'none';
        // The SDK's error (what the AWS API answers), loaded only here: the client costs startup.
        const { StateMachineDoesNotExist } = await import('@aws-sdk/client-sfn');
        throw new StateMachineDoesNotExist({
          $metadata: {},
          message: `no state machine for "${workflow}" in env ${opts.env} (known: ${known})`,
        });
      }
      if (!opts.json)
        process.stderr.write(
          `# ${key(found)}: ${found.type} state machine ${found.logicalId} in stack ${found.stack}; tokens resolved to local placeholders\n`,
        );
      printJson(found.definition);
    }),
  );
}
