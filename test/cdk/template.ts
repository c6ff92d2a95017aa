/**
 * The engine's CDK tests read the fixture project's app; the helpers that read any app's templates are in
 * test/support/app.ts (re-exported here), which the examples use without loading the fixture project.
 */
import { loadProject } from '../../src/project/project.ts';
import { projectApps } from '../support/app.ts';
import { FIXTURE_PROJECT, fixtureEnv } from '../support/fixture-project.ts';

export * from '../support/app.ts';

/** The engine fixture project's app (test/fixtures/project, `fixtureEnv`) of one environment; `template` is case-desk's. */
export const synthApp = projectApps(await loadProject(FIXTURE_PROJECT), fixtureEnv, 'case-desk');
