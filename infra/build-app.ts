import { Tags, type App, type Stack } from 'aws-cdk-lib';
import { loadPlugin, type WorkflowPlugin } from '../lambdas/lib/workflow/plugin.ts';
import { listWorkflows } from '../lambdas/lib/workflow/loader.ts';
import { ConfigError } from '../lambdas/lib/errors.ts';
import { listLifecycles, loadLifecycle } from '../lambdas/lifecycle/loader.ts';
import type { EnvConfig } from './config.ts';
import { LifecycleStack, lifecycleStackName } from './stacks/lifecycle-stack.ts';
import { WorkflowStack, workflowStackName } from './stacks/workflow-stack.ts';

/** The stacks of one environment. */
export interface StepwiseStacks {
  /** One stack per workflow folder of `statemachines/`, by workflow name. */
  readonly workflows: Readonly<Record<string, WorkflowStack>>;
  /** One stack per lifecycle folder (a `statechart.yaml`) of `statemachines/`, by lifecycle name. */
  readonly lifecycles: Readonly<Record<string, LifecycleStack>>;
}

/**
 * Every workflow of `statemachines/` with its code, imported and checked: what the app is built
 * from (with every lifecycle folder). Adding a workflow or lifecycle folder adds a stack; no file here names one.
 */
export function loadProjectWorkflows(): Promise<WorkflowPlugin[]> {
  return Promise.all(listWorkflows().map((name) => loadPlugin(name)));
}

// Loaded once per process (top-level await), so `buildStepwiseApp` and the local synth stay synchronous. A
// broken workflow must not break importing this module (every CLI command does): its error is thrown on use.
const loaded = await loadProjectWorkflows().then(
  (plugins) => ({ plugins }),
  (error: unknown) => ({ error }),
);

/** The project's workflows with their code. @throws DefinitionError of the first broken workflow. */
export function projectWorkflows(): readonly WorkflowPlugin[] {
  if ('error' in loaded) throw loaded.error;
  return loaded.plugins;
}

/**
 * The single place the stacks are instantiated: used by the CDK app (`infra/app.ts`) and by the
 * local runtime's in-process synth. Stacks are environment-agnostic (no account/region lookups),
 * so synth works offline, and their names carry the environment name: `Stepwise-<Workflow>-<env>`.
 */
export function buildStepwiseApp(app: App, config: EnvConfig, workflows: readonly WorkflowPlugin[] = projectWorkflows()): StepwiseStacks {
  const stacks: Record<string, WorkflowStack> = {};
  for (const plugin of workflows) {
    const { name, description } = plugin.def.manifest;
    stacks[name] = new WorkflowStack(app, workflowStackName(name, config.name), {
      config,
      plugin,
      description: `Stepwise (${config.name}): ${name} workflow - ${description}`.slice(0, 1024),
    });
  }
  const lifecycles: Record<string, LifecycleStack> = {};
  const lifecycleNames = listLifecycles();
  const unknown = Object.keys(config.lifecycles).find((name) => !lifecycleNames.includes(name));
  if (unknown) throw new ConfigError(`environment "${config.name}": lifecycles.${unknown}: no lifecycle "${unknown}" (known: ${lifecycleNames.join(', ') || 'none'})`);
  for (const name of lifecycleNames) {
    const lifecycle = loadLifecycle(name);
    lifecycles[name] = new LifecycleStack(app, lifecycleStackName(name, config.name), {
      config,
      lifecycle,
      description: `Stepwise (${config.name}): ${name} lifecycle - event store, bus, state machine, outbox and listeners - ${lifecycle.description}`.slice(0, 1024),
    });
  }
  const all: Stack[] = [...Object.values(stacks), ...Object.values(lifecycles)];
  for (const stack of all) for (const [key, value] of Object.entries(config.tags)) Tags.of(stack).add(key, value);
  return { workflows: stacks, lifecycles };
}
