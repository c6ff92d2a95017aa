import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { buildStepwiseApp } from './build-app.ts';
import { getEnvConfig } from './config.ts';

// `npx cdk synth|deploy -c env=NAME`; cdk.json sets the default (dev).
const app = new App();
buildStepwiseApp(app, getEnvConfig(String(app.node.tryGetContext('env') ?? 'dev')));
// cdk-nag runs at synth; findings that are accepted are acknowledged, with a reason, where the resource is created.
Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
app.synth();
