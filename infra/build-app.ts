import { Tags, type App } from 'aws-cdk-lib';
import type { EnvConfig } from './config.ts';
import { LeadLifecycleStack, leadLifecycleStackName } from './stacks/lead-lifecycle-stack.ts';
import { WarrantyEmailStack } from './stacks/warranty-email-stack.ts';

/** The stacks of one environment. */
export interface StepwiseStacks {
  readonly warranty: WarrantyEmailStack;
  readonly leadLifecycle: LeadLifecycleStack;
}

/**
 * The single place the stacks are instantiated: used by the CDK app (`infra/app.ts`) and by the
 * local runtime's in-process synth. Stacks are environment-agnostic (no account/region lookups),
 * so synth works offline, and their names carry the environment name: `Stepwise-<Concern>-<env>`.
 */
export function buildStepwiseApp(app: App, config: EnvConfig): StepwiseStacks {
  const warranty = new WarrantyEmailStack(app, `Stepwise-WarrantyEmail-${config.name}`, {
    config,
    description: `Stepwise (${config.name}): warranty-claim email agent - tables and the warranty-email workflow`,
  });
  const leadLifecycle = new LeadLifecycleStack(app, leadLifecycleStackName(config), {
    config,
    alarmTopic: warranty.alarmTopic,
    description: `Stepwise (${config.name}): lead lifecycle - event store, leads bus, lifecycle state machine and listeners`,
  });
  const stacks: StepwiseStacks = { warranty, leadLifecycle };
  for (const stack of Object.values(stacks)) {
    for (const [key, value] of Object.entries(config.tags)) Tags.of(stack).add(key, value);
  }
  return stacks;
}
