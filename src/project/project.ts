/**
 * A project as the engine sees it: its config (`stepwise.config.ts`), its workflows with their code
 * (every `statemachines/<name>/workflow.yaml`) and its lifecycles (every `statechart.yaml`), loaded
 * once per process. Found from the project root, never from the engine's location.
 */
import { join } from 'node:path';
import { PROJECT_ROOT } from '../core/paths.ts';
import { listLifecycles } from '../definitions/lifecycle/loader.ts';
import { listWorkflows } from '../definitions/workflow/loader.ts';
import { loadPlugin, type WorkflowPlugin } from '../runtime/plugin.ts';
import {
  type EnvConfig,
  loadProjectConfig,
  type ResolveOptions,
  resolveEnvironment,
  type StepwiseConfig,
} from './config.ts';

export interface Project {
  /** The project root (where `statemachines/` and `stepwise.config.ts` are). */
  readonly root: string;
  readonly config: StepwiseConfig;
  /** Every workflow with its code, checked; by folder order. */
  readonly workflows: readonly WorkflowPlugin[];
  /** The lifecycle folders (those with a `statechart.yaml`). */
  readonly lifecycles: readonly string[];
}

const projects = new Map<string, Promise<Project>>();

/**
 * The project at `root`, loaded once per process.
 * @throws DefinitionError of the first broken workflow, ConfigError of a broken config.
 */
export function loadProject(root: string = PROJECT_ROOT): Promise<Project> {
  let project = projects.get(root);
  if (!project) {
    const statemachines = join(root, 'statemachines');
    project = (async () => ({
      root,
      config: await loadProjectConfig(root),
      workflows: await Promise.all(listWorkflows(statemachines).map((name) => loadPlugin(name, statemachines))),
      lifecycles: listLifecycles(statemachines),
    }))();
    projects.set(root, project);
    project.catch(() => projects.delete(root));
  }
  return project;
}

/** One environment of the project's config. @throws ConfigError (one line naming the field). */
export async function projectEnvironment(
  name: string,
  options: ResolveOptions & { root?: string } = {},
): Promise<EnvConfig> {
  return resolveEnvironment(await loadProjectConfig(options.root), name, options);
}
