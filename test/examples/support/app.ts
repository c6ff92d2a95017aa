/** The example project's app (this repository's own, with its stepwise.config.ts), for the examples' stack tests. */
import { PACKAGE_ROOT } from '../../../src/core/paths.ts';
import { loadProject } from '../../../src/project/project.ts';
import { projectApps } from '../../support/app.ts';
import { exampleEnv } from './config.ts';

/** The example app of one environment, synthesized once per test worker (`projectApps`); `template` is warranty-email's. */
export const synthApp = projectApps(await loadProject(PACKAGE_ROOT), exampleEnv, 'warranty-email');
