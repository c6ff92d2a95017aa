// `npx cdk synth|deploy -c env=NAME`; cdk.json sets the default (dev).
import { StepwiseApp } from 'stepwise/cdk';
import config from '../stepwise.config.ts';

await StepwiseApp.main({ config });
