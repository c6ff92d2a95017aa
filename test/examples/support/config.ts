import { type EnvConfig, resolveEnvironment } from '../../../src/project/config.ts';
import projectConfig from '../../../stepwise.config.ts';

/**
 * An environment of this repository's own config (the example project's), placeholders accepted: tests deploy nothing.
 */
export const exampleEnv = (name: string): EnvConfig =>
  resolveEnvironment(projectConfig, name, { allowPlaceholders: true });
