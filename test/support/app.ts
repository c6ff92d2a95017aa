/**
 * Synthesize a project's app without bundling and read its templates back: shared by the engine's CDK tests (the
 * fixture project's app, test/cdk/template.ts) and the examples' (test/examples/support/app.ts).
 */
import { App, type Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { addStepwiseStacks, type StepwiseStacks } from '../../src/cdk/stepwise-app.ts';
import { fromTemplates, type SynthesizedApp as LocalApp } from '../../src/local/cloud/synth.ts';
import type { EnvConfig } from '../../src/project/config.ts';
import type { Project } from '../../src/project/project.ts';

export type Json = Record<string, any>;

export interface SynthesizedApp {
  app: App;
  stacks: StepwiseStacks;
  /** The stack of the workflow the app was made for (`projectApps`' `workflow`). */
  template: Template;
}

/**
 * The apps of `project`, one per environment (`environment(name)`), bundling skipped (the asset hashes stay fake),
 * each synthesized once per test worker: the files of a worker share its modules, and a dozen of them read the same
 * app. Read it only; a construct added to it would reach the files after. `template` is `workflow`'s stack.
 */
export function projectApps(
  project: Project,
  environment: (name: string) => EnvConfig,
  workflow: string,
): (env?: string) => SynthesizedApp {
  const apps = new Map<string, SynthesizedApp>();
  return (env = 'dev') => {
    let synthesized = apps.get(env);
    if (!synthesized) {
      const app = new App({ context: { env, 'aws:cdk:bundling-stacks': [] } });
      const stacks = addStepwiseStacks(app, environment(env), project);
      synthesized = { app, stacks, template: Template.fromStack(stacks.workflows[workflow]!) };
      apps.set(env, synthesized);
    }
    return synthesized;
  };
}

/** Every stack of the app by name: one per workflow and one per lifecycle (by their folder names). */
export function allStacks(stacks: StepwiseStacks): Record<string, Stack> {
  return { ...stacks.workflows, ...stacks.lifecycles };
}

/**
 * The app as the local runtime reads one (src/local/cloud/synth.ts): the templates by stack name and the state machines
 * with their definitions resolved, from the stacks `synthApp` already synthesized.
 */
export function localView({ stacks }: SynthesizedApp): LocalApp {
  return fromTemplates(
    Object.fromEntries(Object.values(allStacks(stacks)).map((s) => [s.stackName, Template.fromStack(s).toJSON()])),
  );
}

/** A placeholder function ARN for the `Fn::GetAtt [<logicalId>, Arn]` in a definition. */
export const functionArn = (logicalId: string): string => `arn:aws:lambda:us-east-1:123456789012:function:${logicalId}`;

/** The workflow's state machine of a template: its resource, the raw `DefinitionString`, and the ASL with function ARNs filled in. */
export function stateMachineOf(template: Template): { resource: Json; raw: unknown; asl: Json } {
  // A workflow's compiled state machine carries its name (the single-prompt agent beside it does not).
  const machines = Object.values(template.findResources('AWS::StepFunctions::StateMachine')).filter(
    (m) => m.Metadata?.['stepwise:workflow'],
  );
  if (machines.length !== 1) throw new Error(`expected one workflow state machine, found ${machines.length}`);
  const resource = machines[0]!;
  const raw = resource.Properties.DefinitionString;
  const parts: unknown[] = typeof raw === 'string' ? [raw] : raw['Fn::Join'][1];
  const text = parts
    .map((p) => {
      if (typeof p === 'string') return p;
      const [logicalId, attribute] = (p as Json)['Fn::GetAtt'] ?? [];
      if (attribute !== 'Arn') throw new Error(`unexpected token in the definition: ${JSON.stringify(p)}`);
      return functionArn(logicalId);
    })
    .join('');
  return { resource, raw, asl: JSON.parse(text) };
}

/** Logical id of the function whose environment says `STEP: step`. */
export function functionOfStep(template: Template, step: string): string {
  const ids = Object.entries(template.findResources('AWS::Lambda::Function'))
    .filter(([, r]) => r.Properties.Environment?.Variables?.STEP === step)
    .map(([id]) => id);
  if (ids.length !== 1) throw new Error(`expected one function for step ${step}, found ${ids.length}`);
  return ids[0]!;
}

/** Every IAM statement attached to a function's role (all its policies). */
export function statementsOfFunction(template: Template, functionLogicalId: string): Json[] {
  const fn = template.findResources('AWS::Lambda::Function')[functionLogicalId]!;
  const roleId: string = fn.Properties.Role['Fn::GetAtt'][0];
  return Object.values(template.findResources('AWS::IAM::Policy'))
    .filter((p) => (p.Properties.Roles as Json[]).some((r) => r.Ref === roleId))
    .flatMap((p) => p.Properties.PolicyDocument.Statement as Json[]);
}

/** Statement actions as a flat list. */
export const actionsOf = (statement: Json): string[] => [statement.Action].flat();
