/** Shared by the lifecycle-aws tests: the lead lifecycle's stack, synthesized once per process. */
import { App } from 'aws-cdk-lib';
import { lifecycleStackName } from '../../../../src/cdk/names.ts';
import { LifecycleStack } from '../../../../src/cdk/stacks/lifecycle-stack.ts';
import { loadLifecycle } from '../../../../src/definitions/lifecycle/loader.ts';
import type { CfnTemplate } from '../../../../src/local/cloud/intrinsics.ts';
import { type SynthesizedApp, synthesize } from '../../../../src/local/cloud/synth.ts';
import { fixtureEnv } from '../../../support/fixture-project.ts';

export type Json = Record<string, any>;

/** The lifecycle these tests exercise: the lead example. */
export const LEAD = 'lead-lifecycle';
const stackName = lifecycleStackName(LEAD, 'dev');

let dev: SynthesizedApp | undefined;

/** The dev lifecycle stack as the local runtime sees it (asset bundling skipped). */
export function lifecycleApp(): { app: SynthesizedApp; template: CfnTemplate } {
  dev ??= synthesize(
    (app) => new LifecycleStack(app, stackName, { config: fixtureEnv('dev'), lifecycle: loadLifecycle(LEAD) }),
  );
  return { app: dev, template: dev.templates[stackName]! };
}

/** The dev lifecycle stack in its own app, for CDK assertions. */
export function lifecycleStack(): { app: App; stack: LifecycleStack } {
  const app = new App({ context: { env: 'dev', 'aws:cdk:bundling-stacks': [] } });
  return {
    app,
    stack: new LifecycleStack(app, stackName, { config: fixtureEnv('dev'), lifecycle: loadLifecycle(LEAD) }),
  };
}
