/**
 * `stepwise/config`: what the project's `stepwise.config.ts` imports. Its own entry, without the CDK, so every
 * local command that reads the config (`run`, `eval`, `validate`, …) starts without loading aws-cdk-lib.
 *
 * @example
 * import { defineConfig } from 'stepwise/config';
 *
 * export default defineConfig({ environments: { dev: { logLevel: 'DEBUG' } } });
 */
export {
  defineConfig,
  type EnvironmentSettings,
  type LifecycleSettings,
  type StepwiseConfig,
} from './project/config.ts';
