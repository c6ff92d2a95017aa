// The CDK app: one stack per workflow and lifecycle of statemachines/, for the environment of
// `cdk synth|deploy -c env=NAME` (environments: stepwise.config.ts). Add stacks of your own in the
// callback: `await StepwiseApp.main({ config }, (app) => { new MyStack(app, 'Mine'); })`.
import { StepwiseApp } from 'stepwise/cdk';
import config from '../stepwise.config.ts';

await StepwiseApp.main({ config });
