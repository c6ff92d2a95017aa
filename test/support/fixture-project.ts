/**
 * The engine's own fixture project, test/fixtures/project: a complete Stepwise project (config, four workflows, a
 * lifecycle, a CDK app) that the engine's tests run instead of the repository's examples. Its README says what each
 * workflow and the lifecycle are for.
 *
 * In the engine's tests `PROJECT_ROOT` is this folder (`STEPWISE_PROJECT_ROOT`), so what is bound to the project
 * (`WorkflowSession`, `LifecycleSession`, `synthProject`, the CLI in process) runs it. A test that starts the CLI as a
 * subprocess runs it in a copy (`copyFixtureProject`), so that no `.stepwise/` state lands in the working tree.
 */
import { copyFileSync, cpSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { PACKAGE_ROOT } from '../../src/core/paths.ts';
import { type EnvConfig, resolveEnvironment } from '../../src/project/config.ts';
import fixtureConfig from '../fixtures/project/stepwise.config.ts';
import { builtPackage } from './built-package.ts';

/** The fixture project's root, found from the repository (`PROJECT_ROOT` may be this folder itself). */
export const FIXTURE_PROJECT = join(PACKAGE_ROOT, 'test', 'fixtures', 'project');
/** Its workflow and lifecycle definitions: the `root` of `loadWorkflow`, `loadLifecycle`, `LifecycleSession.start`. */
export const FIXTURE_STATEMACHINES = join(FIXTURE_PROJECT, 'statemachines');

/** An environment of the fixture's stepwise.config.ts, placeholders accepted: tests deploy nothing. */
export const fixtureEnv = (name = 'dev'): EnvConfig =>
  resolveEnvironment(fixtureConfig, name, { allowPlaceholders: true });

/** Local state and build output of runs in the fixture folder itself (git ignores them): never copied, never a fixture. */
export const LOCAL_OUTPUT = /^(\.stepwise|node_modules|cdk\.out.*)$/;

export interface FixtureCopyOptions {
  /**
   * Run the compiled engine (`npm run build`, once per source: built-package.ts), as a project with the package
   * installed does: `stepwise` resolves to the built package, the CLI starts without tsx. @default false: the source
   */
  built?: boolean;
}

const writeJson = (file: string, value: unknown) => writeFileSync(file, `${JSON.stringify(value, null, 2)}\n`);

/**
 * Copy the fixture project into `dir` (existing and empty) so a CLI subprocess can run there: `stepwise(dir, …)` of
 * project-copy.ts runs the copy's `bin/stepwise.mjs`. Besides the fixture's files the copy has the repository's
 * package-lock.json (local runs need a lock file) and, from source, a tsconfig.json extending the repository's (its
 * `paths` map `stepwise` to src/), node_modules linked to the repository's and bin/stepwise.mjs linked to its CLI;
 * built, a tsconfig.json without `paths`, a node_modules of links plus `stepwise` (the built package) and the
 * built CLI.
 */
export function copyFixtureProject(dir: string, options: FixtureCopyOptions = {}): string {
  cpSync(FIXTURE_PROJECT, dir, { recursive: true, filter: (from) => !LOCAL_OUTPUT.test(basename(from)) });
  copyFileSync(join(PACKAGE_ROOT, 'package-lock.json'), join(dir, 'package-lock.json'));
  mkdirSync(join(dir, 'bin'));
  const repoModules = join(PACKAGE_ROOT, 'node_modules');
  if (!options.built) {
    writeJson(join(dir, 'tsconfig.json'), { extends: join(PACKAGE_ROOT, 'tsconfig.json'), include: ['**/*.ts'] });
    symlinkSync(repoModules, join(dir, 'node_modules'));
    symlinkSync(join(PACKAGE_ROOT, 'bin', 'stepwise.mjs'), join(dir, 'bin', 'stepwise.mjs'));
    return dir;
  }
  const built = builtPackage();
  const { paths: _, ...compilerOptions } = JSON.parse(readFileSync(join(PACKAGE_ROOT, 'tsconfig.json'), 'utf8'))
    .compilerOptions as Record<string, unknown>;
  writeJson(join(dir, 'tsconfig.json'), { compilerOptions, include: ['**/*.ts'] });
  mkdirSync(join(dir, 'node_modules'));
  for (const entry of readdirSync(repoModules)) symlinkSync(join(repoModules, entry), join(dir, 'node_modules', entry));
  symlinkSync(built, join(dir, 'node_modules', 'stepwise'));
  // bin/stepwise.mjs runs ../dist/cli/main.js when there is no ../src: the link resolves to the built package, whose
  // package.json (the version) and templates the engine then finds.
  copyFileSync(join(PACKAGE_ROOT, 'bin', 'stepwise.mjs'), join(dir, 'bin', 'stepwise.mjs'));
  symlinkSync(join(built, 'dist'), join(dir, 'dist'));
  return dir;
}
