/**
 * Synthesize a CDK app in-process (no `cdk` CLI, no AWS account) and extract what the local runtime
 * runs: every stack's template and every state machine's definition with its intrinsics resolved.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { App } from 'aws-cdk-lib';
import type { StateMachineDefinition } from 'aws-local-stepfunctions';
import { WORKFLOW_METADATA } from '../../cdk/metadata.ts';
import { DefinitionError } from '../../core/errors.ts';
import { PROJECT_ROOT } from '../../core/paths.ts';
import { resolveEnvironment } from '../../project/config.ts';
import { loadProject } from '../../project/project.ts';
import { type CfnTemplate, type IntrinsicContext, resolveIntrinsics } from './intrinsics.ts';
import { readSynthCache, type StackEnvironment, type SynthOutput, writeSynthCache } from './synth-cache.ts';

/** A state machine of the synthesized app, as the local runtime runs it. */
export interface SynthesizedStateMachine {
  /** Stack name. */
  stack: string;
  logicalId: string;
  /** The workflow it runs (`stepwise:workflow` metadata), for compiled agent workflows. */
  workflowName?: string;
  /** Its placeholder ARN (`arn:aws:states:<region>:<account>:stateMachine:<logicalId>`). */
  arn: string;
  /** `StateMachineName` when set, else the logical id. */
  name: string;
  type: 'STANDARD' | 'EXPRESS';
  /** The ASL as deployed, intrinsics resolved to local placeholders. */
  definition: StateMachineDefinition;
}

/** A synthesized app. */
export interface SynthesizedApp {
  /** Templates by stack name. */
  templates: Record<string, CfnTemplate>;
  /** How the intrinsics of each stack resolve (region/account from the stack's environment when concrete). */
  contexts: Record<string, IntrinsicContext>;
  stateMachines: SynthesizedStateMachine[];
}

export interface SynthesizeOptions {
  /** The `env` context value (`-c env=NAME`). @default 'dev' */
  env?: string;
  /** More context values. */
  context?: Record<string, unknown>;
}

const STATE_MACHINE = 'AWS::StepFunctions::StateMachine';

/** The state machines of one template, with their definitions resolved. */
function stateMachinesOf(stack: string, template: CfnTemplate, ctx: IntrinsicContext): SynthesizedStateMachine[] {
  return Object.entries(template.Resources ?? {})
    .filter(([, r]) => r.Type === STATE_MACHINE)
    .map(([logicalId, resource]) => {
      const resolved = resolveIntrinsics<Record<string, unknown>>(resource.Properties ?? {}, template, ctx);
      const where = `Resources.${logicalId}.Properties`;
      let definition: unknown = resolved.Definition;
      if (typeof resolved.DefinitionString === 'string') {
        try {
          definition = JSON.parse(resolved.DefinitionString);
        } catch (e) {
          throw new DefinitionError(`template ${stack}`, `${where}.DefinitionString`, (e as Error).message);
        }
      }
      if (!definition || typeof definition !== 'object') {
        throw new DefinitionError(
          `template ${stack}`,
          where,
          'no inline Definition or DefinitionString (S3 definitions are not supported locally)',
        );
      }
      const workflowName = resource.Metadata?.[WORKFLOW_METADATA];
      return {
        stack,
        logicalId,
        ...(typeof workflowName === 'string' && { workflowName }),
        arn: resolveIntrinsics<string>({ 'Fn::GetAtt': [logicalId, 'Arn'] }, template, ctx),
        name: resolveIntrinsics<string>({ 'Fn::GetAtt': [logicalId, 'Name'] }, template, ctx),
        type: resolved.StateMachineType === 'EXPRESS' ? 'EXPRESS' : 'STANDARD',
        definition: definition as StateMachineDefinition,
      };
    });
}

/**
 * Read already synthesized templates (by stack name): the way to run a hand-written or
 * `cdk synth`-produced template locally.
 */
export function fromTemplates(
  templates: Record<string, CfnTemplate>,
  environments: Record<string, StackEnvironment> = {},
): SynthesizedApp {
  const contexts: Record<string, IntrinsicContext> = {};
  for (const stack of Object.keys(templates)) contexts[stack] = { stackName: stack, ...environments[stack], templates };
  const stateMachines = Object.entries(templates).flatMap(([stack, template]) =>
    stateMachinesOf(stack, template, contexts[stack]!),
  );
  return { templates, contexts, stateMachines };
}

/**
 * Build an app with `build`, synthesize it into a temporary folder (deleted before returning) with
 * asset bundling skipped, and read every stack's template and state machines.
 *
 * @example
 * const synthesized = synthesize((app) => {
 *   const stack = new Stack(app, 'Test');
 *   new AgentWorkflow(stack, 'Workflow', { workflow, config });
 * });
 */
export function synthesize(build: (app: App) => void, options: SynthesizeOptions = {}): SynthesizedApp {
  const { templates, environments } = synthesizeTemplates(build, options);
  return fromTemplates(templates, environments);
}

/** {@link synthesize}'s templates and stack environments, before they are read. */
function synthesizeTemplates(build: (app: App) => void, options: SynthesizeOptions): SynthOutput {
  // CDK's built-in CloudFormation validation costs synth time and checks nothing the local run needs.
  process.env.CDK_VALIDATION ??= 'false';
  const outdir = mkdtempSync(join(tmpdir(), 'stepwise-cdk.out-'));
  try {
    // Required here, not imported at the top: a local command with a cached synth never loads the CDK.
    const { App: CdkApp } = createRequire(import.meta.url)('aws-cdk-lib') as typeof import('aws-cdk-lib');
    const app = new CdkApp({
      outdir,
      context: { env: options.env ?? 'dev', 'aws:cdk:bundling-stacks': [], ...options.context },
    });
    build(app);
    const templates: Record<string, CfnTemplate> = {};
    const environments: Record<string, StackEnvironment> = {};
    for (const artifact of app.synth().stacksRecursively) {
      templates[artifact.stackName] = artifact.template;
      const { region, account } = artifact.environment;
      environments[artifact.stackName] = {
        ...(!region.startsWith('unknown-') && { region }),
        ...(!account.startsWith('unknown-') && { accountId: account }),
      };
    }
    return { templates, environments };
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}

/**
 * The app `build` makes, or its output stored under `key` while every input of the project and the engine is
 * unchanged (./synth-cache.ts). `build` is called, and the CDK loaded, on a miss only.
 */
export async function synthesizeCached(
  key: string,
  options: SynthesizeOptions,
  build: () => Promise<(app: App) => void>,
): Promise<SynthesizedApp> {
  const cached = readSynthCache(PROJECT_ROOT, key);
  if (cached) return fromTemplates(cached.templates, cached.environments);
  const output = synthesizeTemplates(await build(), options);
  await writeSynthCache(PROJECT_ROOT, key, output);
  return fromTemplates(output.templates, output.environments);
}

const projectApps = new Map<string, Promise<SynthesizedApp>>();

/**
 * The project's app (every stack {@link addStepwiseStacks} builds, as `StepwiseApp` does) for
 * environment `env` of its `stepwise.config.ts`, synthesized once per process (building the
 * constructs costs hundreds of milliseconds) and kept between processes while its inputs are
 * unchanged (./synth-cache.ts). Placeholder values are accepted:
 * nothing is deployed.
 */
export function synthProject(env = 'dev'): Promise<SynthesizedApp> {
  let synthesized = projectApps.get(env);
  if (!synthesized) {
    synthesized = (async () => {
      return synthesizeCached(env, { env }, async () => {
        const project = await loadProject();
        const config = resolveEnvironment(project.config, env, { allowPlaceholders: true });
        const { addStepwiseStacks } = await import('../../cdk/stepwise-app.ts');
        return (app) => addStepwiseStacks(app, config, project);
      });
    })();
    projectApps.set(env, synthesized);
    synthesized.catch(() => projectApps.delete(env));
  }
  return synthesized;
}

/** `app` as a session on a shared DynamoDB Local sees it: every table name after `tablePrefix`. */
export function withTablePrefix(app: SynthesizedApp, tablePrefix: string): SynthesizedApp {
  if (!tablePrefix) return app;
  const contexts = Object.fromEntries(
    Object.entries(app.contexts).map(([stack, ctx]) => [stack, { ...ctx, tablePrefix }]),
  );
  return { ...app, contexts };
}
