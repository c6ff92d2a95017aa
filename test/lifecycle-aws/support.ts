/** Shared by the lifecycle-aws tests: the lifecycle stack, synthesized once per process. */
import { App } from 'aws-cdk-lib';
import { synthesize, type SynthesizedApp } from '../../infra/local/synth.ts';
import type { CfnTemplate } from '../../infra/local/tokens.ts';
import { LeadLifecycleStack, leadLifecycleStackName } from '../../infra/stacks/lead-lifecycle-stack.ts';
import { exampleEnv } from '../support/config.ts';

export type Json = Record<string, any>;

let dev: SynthesizedApp | undefined;

/** The dev lifecycle stack as the local runtime sees it (asset bundling skipped). */
export function lifecycleApp(): { app: SynthesizedApp; template: CfnTemplate } {
  dev ??= synthesize((app) => new LeadLifecycleStack(app, leadLifecycleStackName(exampleEnv('dev')), { config: exampleEnv('dev') }));
  return { app: dev, template: dev.templates[leadLifecycleStackName(exampleEnv('dev'))]! };
}

/** The dev lifecycle stack in its own app, for CDK assertions. */
export function lifecycleStack(): { app: App; stack: LeadLifecycleStack } {
  const app = new App({ context: { env: 'dev', 'aws:cdk:bundling-stacks': [] } });
  const config = exampleEnv('dev');
  return { app, stack: new LeadLifecycleStack(app, leadLifecycleStackName(config), { config }) };
}
