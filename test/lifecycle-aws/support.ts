/** Shared by the lifecycle-aws tests: the lifecycle stack, synthesized once per process. */
import { App } from 'aws-cdk-lib';
import { getEnvConfig } from '../../infra/config.ts';
import { synthesize, type SynthesizedApp } from '../../infra/local/synth.ts';
import type { CfnTemplate } from '../../infra/local/tokens.ts';
import { LeadLifecycleStack, leadLifecycleStackName } from '../../infra/stacks/lead-lifecycle-stack.ts';

export type Json = Record<string, any>;

let dev: SynthesizedApp | undefined;

/** The dev lifecycle stack as the local runtime sees it (asset bundling skipped). */
export function lifecycleApp(): { app: SynthesizedApp; template: CfnTemplate } {
  dev ??= synthesize((app) => new LeadLifecycleStack(app, leadLifecycleStackName(getEnvConfig('dev')), { config: getEnvConfig('dev') }));
  return { app: dev, template: dev.templates[leadLifecycleStackName(getEnvConfig('dev'))]! };
}

/** The dev lifecycle stack in its own app, for CDK assertions. */
export function lifecycleStack(): { app: App; stack: LeadLifecycleStack } {
  const app = new App({ context: { env: 'dev', 'aws:cdk:bundling-stacks': [] } });
  const config = getEnvConfig('dev');
  return { app, stack: new LeadLifecycleStack(app, leadLifecycleStackName(config), { config }) };
}
