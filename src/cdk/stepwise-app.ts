import { join } from 'node:path';
import { App, type AppProps, type Stack, Tags, Validations } from 'aws-cdk-lib';
import type { AwsSolutionsChecks } from 'cdk-nag';
import type { Construct } from 'constructs';
import { ConfigError, StepwiseError } from '../core/errors.ts';
import { loadLifecycle } from '../definitions/lifecycle/loader.ts';
import { type EnvConfig, type ResolveOptions, resolveEnvironment, type StepwiseConfig } from '../project/config.ts';
import { loadProject, type Project } from '../project/project.ts';
import { lifecycleStackName, workflowStackName } from './names.ts';
import { LifecycleStack } from './stacks/lifecycle-stack.ts';
import { WorkflowStack } from './stacks/workflow-stack.ts';

/** The stacks of one environment. */
export interface StepwiseStacks {
  /** One stack per workflow folder of `statemachines/`, by workflow name. */
  readonly workflows: Readonly<Record<string, WorkflowStack>>;
  /** One stack per lifecycle folder (a `statechart.yaml`), by lifecycle name. */
  readonly lifecycles: Readonly<Record<string, LifecycleStack>>;
}

/**
 * The single place the stacks are instantiated: used by {@link StepwiseApp} (a project's
 * `infra/app.ts`) and by the local runtime's in-process synth. Stacks carry the environment's
 * account and region when it sets them (no lookups, so synth works offline), and their names carry
 * the environment name: `Stepwise-<Workflow>-<env>`. Adding a workflow folder adds a stack; no
 * file here names one.
 */
export function addStepwiseStacks(
  scope: Construct,
  config: EnvConfig,
  project: Pick<Project, 'root' | 'workflows' | 'lifecycles'>,
): StepwiseStacks {
  const env = config.account || config.region ? { env: { account: config.account, region: config.region } } : {};
  const workflows: Record<string, WorkflowStack> = {};
  for (const plugin of project.workflows) {
    const { name, description } = plugin.def.manifest;
    workflows[name] = new WorkflowStack(scope, workflowStackName(name, config.name), {
      ...env,
      config,
      plugin,
      description: `Stepwise (${config.name}): ${name} workflow - ${description}`.slice(0, 1024),
    });
  }
  const lifecycles: Record<string, LifecycleStack> = {};
  const unknown = Object.keys(config.lifecycles).find((name) => !project.lifecycles.includes(name));
  if (unknown)
    throw new ConfigError(
      `environment "${config.name}": lifecycles.${unknown}: no lifecycle "${unknown}" (known: ${project.lifecycles.join(', ') || 'none'})`,
    );
  for (const name of project.lifecycles) {
    const lifecycle = loadLifecycle(name, join(project.root, 'statemachines'));
    lifecycles[name] = new LifecycleStack(scope, lifecycleStackName(name, config.name), {
      ...env,
      config,
      lifecycle,
      description:
        `Stepwise (${config.name}): ${name} lifecycle - event store, bus, state machine, outbox and listeners - ${lifecycle.description}`.slice(
          0,
          1024,
        ),
    });
  }
  const all: Stack[] = [...Object.values(workflows), ...Object.values(lifecycles)];
  for (const stack of all) for (const [key, value] of Object.entries(config.tags)) Tags.of(stack).add(key, value);
  return { workflows, lifecycles };
}

export interface StepwiseAppProps extends AppProps, ResolveOptions {
  /** The project's config (the default export of `stepwise.config.ts`). */
  readonly config: StepwiseConfig;
  /** The environment to synthesize. @default the `env` context value (`-c env=NAME`), else `dev` */
  readonly environment?: string;
  /** The project root. @default found from the working directory */
  readonly root?: string;
  /** Run the cdk-nag AWS Solutions checks at synth (findings accepted in Stepwise's constructs are acknowledged there, with a reason). @default true */
  readonly nag?: boolean;
}

/**
 * A project's CDK app: one stack per workflow and lifecycle of its `statemachines/`, for the
 * environment selected with `-c env=NAME`. Add stacks of your own to it like to any `App`.
 *
 * @example
 * // infra/app.ts
 * import { StepwiseApp } from 'stepwise/cdk';
 * import config from '../../stepwise.config.ts';
 *
 * await StepwiseApp.main({ config });
 */
export class StepwiseApp extends App {
  /** The selected environment, validated. */
  readonly environment: EnvConfig;
  readonly stacks: StepwiseStacks;

  private constructor(
    props: StepwiseAppProps,
    project: Project,
    nag: ((scope: App) => AwsSolutionsChecks) | undefined,
  ) {
    super(props);
    this.environment = resolveEnvironment(
      props.config,
      props.environment ?? String(this.node.tryGetContext('env') ?? 'dev'),
      props,
    );
    this.stacks = addStepwiseStacks(this, this.environment, project);
    if (nag) Validations.of(this).addPlugins(nag(this));
  }

  /**
   * Load the project's workflows (importing their code) and build the app.
   * @throws ConfigError or DefinitionError, one line naming the file or field.
   */
  static async create(props: StepwiseAppProps): Promise<StepwiseApp> {
    const project = await loadProject(props.root);
    // cdk-nag only where the app is deployed from: it is a fifth of a local synth's startup.
    const nag = (props.nag ?? true) ? (await import('cdk-nag')).AwsSolutionsChecks : undefined;
    return new StepwiseApp(props, { ...project, config: props.config }, nag && ((scope) => new nag(scope)));
  }

  /**
   * What `infra/app.ts` runs: build the app, let `extend` add stacks of its own, synthesize. A
   * configuration or definition error is one line on stderr and exit code 1 (no stack trace).
   */
  static async main(props: StepwiseAppProps, extend?: (app: StepwiseApp) => void | Promise<void>): Promise<void> {
    try {
      const app = await StepwiseApp.create(props);
      await extend?.(app);
      app.synth();
    } catch (e) {
      if (!(e instanceof StepwiseError)) throw e;
      process.stderr.write(`stepwise: ${e.message}\n`);
      process.exitCode = 1;
    }
  }
}
