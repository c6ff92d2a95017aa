/** Shared by the lifecycle-aws tests: the fixture lifecycle's stack (member-journey), synthesized once per process. */
import { App } from 'aws-cdk-lib';
import { lifecycleStackName } from '../../../../src/cdk/names.ts';
import { LifecycleStack } from '../../../../src/cdk/stacks/lifecycle-stack.ts';
import type { CfnTemplate } from '../../../../src/local/cloud/intrinsics.ts';
import { type SynthesizedApp, synthesize } from '../../../../src/local/cloud/synth.ts';
import { agent, def, LIFECYCLE } from '../../../runtime/lifecycle/support.ts';
import { fixtureEnv } from '../../../support/fixture-project.ts';

export type Json = Record<string, any>;

export { LIFECYCLE };

const stackName = lifecycleStackName(LIFECYCLE, 'dev');

let dev: SynthesizedApp | undefined;

/**
 * The fixture's dev lifecycle stack as the local runtime sees it (asset bundling skipped). Its agent (the environment's,
 * attend-call) is loaded by path, so the app synthesizes whatever the project root is (test/reliability runs in this
 * repository's).
 */
export function lifecycleApp(): { app: SynthesizedApp; template: CfnTemplate } {
  dev ??= synthesize(
    (app) =>
      new LifecycleStack(app, stackName, {
        config: fixtureEnv('dev'),
        lifecycle: def,
        agentConfig: agent('attend-call'),
      }),
  );
  return { app: dev, template: dev.templates[stackName]! };
}

/** The fixture's dev lifecycle stack in its own app, for CDK assertions (its agent is the environment's default). */
export function lifecycleStack(): { app: App; stack: LifecycleStack } {
  const app = new App({ context: { env: 'dev', 'aws:cdk:bundling-stacks': [] } });
  return { app, stack: new LifecycleStack(app, stackName, { config: fixtureEnv('dev'), lifecycle: def }) };
}
