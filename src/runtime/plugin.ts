/**
 * A workflow's TypeScript, found by convention: code steps are `lambdas/workflows/<workflow>/steps/<handler>.ts`
 * and tools `lambdas/workflows/<workflow>/tools/<tool, _ as ->.ts`, each with a default export.
 *
 * Where the modules come from is a port ({@link WorkflowModules}): from source, they are imported
 * from the project's files (beside its `statemachines/`); in a Lambda bundle, the entry generated
 * for the workflow at synth imports exactly that workflow's modules statically and hands them over,
 * so a bundle holds the engine and one workflow and nothing else.
 */
import { dirname, join } from 'node:path';
import type { ZodObject } from 'zod';
import { DefinitionError } from '../core/errors.ts';
import { STATEMACHINES_DIR } from '../core/paths.ts';
import { folderModules, importProjectModules, projectModuleFile } from '../core/project-modules.ts';
import { relPath } from '../definitions/definition-file.ts';
import { checkConsensusTools } from '../definitions/workflow/consensus.ts';
import { loadWorkflow } from '../definitions/workflow/loader.ts';
import type { WorkflowDefinition } from '../definitions/workflow/schema.ts';
import type { FastPath } from './steps/fast-path.ts';
import type { CodeStep } from './steps/types.ts';
import { mcpTools } from './tools/mcp/tools.ts';
import { type ToolDefinition, toolModuleName } from './tools/types.ts';

/** A workflow with its code: what the compiler, the step handler and the local session need. */
export interface WorkflowPlugin {
  readonly def: WorkflowDefinition;
  /** Every tool of the manifest (tool modules and MCP tools), by name. */
  readonly tools: Readonly<Record<string, ToolDefinition>>;
  /** Every code step's handler, by its frontmatter `handler`. */
  readonly codeSteps: Readonly<Record<string, CodeStep>>;
  /** Every fast path of the manifest (`fastPaths`), by the LLM step it runs before. */
  readonly fastPaths?: Readonly<Record<string, FastPath>>;
}

/** A workflow module as imported: its default export is the code step, fast path or tool. */
export type WorkflowModule = { default?: unknown };

/** Where a workflow's code modules come from; `undefined` when there is no such module. */
export interface WorkflowModules {
  codeStep(handler: string): Promise<WorkflowModule | undefined>;
  tool(file: string): Promise<WorkflowModule | undefined>;
}

/** The folder of a workflow's code, beside the `statemachines/` folder its definitions are in. */
export const workflowCodeDir = (def: Pick<WorkflowDefinition, 'dir'>): string =>
  join(dirname(dirname(def.dir)), 'lambdas', 'workflows', def.dir.split(/[\\/]/).pop()!);

/** A workflow's code module as users see it in messages: `lambdas/workflows/<workflow>/steps/<handler>.ts`. */
export const codeStepModule = (def: Pick<WorkflowDefinition, 'dir'>, handler: string) =>
  relPath(projectModuleFile(join(workflowCodeDir(def), 'steps', handler)));
export const toolModule = (def: Pick<WorkflowDefinition, 'dir'>, tool: string) =>
  relPath(projectModuleFile(join(workflowCodeDir(def), 'tools', toolModuleName(tool))));

/** A workflow's modules read from the project's files: every code step and tool, imported together on first use. */
export function projectWorkflowModules(def: Pick<WorkflowDefinition, 'dir'>): WorkflowModules {
  const dir = workflowCodeDir(def);
  let loaded: Promise<{ codeSteps: Record<string, WorkflowModule>; tools: Record<string, WorkflowModule> }> | undefined;
  const load = () =>
    (loaded ??= (async () => {
      const steps = folderModules(join(dir, 'steps'));
      const tools = folderModules(join(dir, 'tools'));
      const modules = await importProjectModules(
        { ...prefixed('step:', steps), ...prefixed('tool:', tools) },
        dirname(dirname(def.dir)),
      );
      const pick = (prefix: string) =>
        Object.fromEntries(
          Object.entries(modules)
            .filter(([k]) => k.startsWith(prefix))
            .map(([k, m]) => [k.slice(prefix.length), m]),
        );
      return { codeSteps: pick('step:'), tools: pick('tool:') };
    })());
  return {
    codeStep: async (handler) => staticWorkflowModules(await load()).codeStep(handler),
    tool: async (file) => staticWorkflowModules(await load()).tool(file),
  };
}

const prefixed = (prefix: string, table: Record<string, string>) =>
  Object.fromEntries(Object.entries(table).map(([k, v]) => [prefix + k, v]));

/** A workflow's modules as a generated bundle entry imports them statically. */
export function staticWorkflowModules(modules: {
  codeSteps: Record<string, WorkflowModule>;
  tools: Record<string, WorkflowModule>;
}): WorkflowModules {
  const pick = (table: Record<string, WorkflowModule>, key: string) =>
    Promise.resolve(Object.hasOwn(table, key) ? table[key] : undefined);
  return { codeStep: (handler) => pick(modules.codeSteps, handler), tool: (file) => pick(modules.tools, file) };
}

/** The default export of a workflow module, or why there is none (for a DefinitionError). */
async function defaultExport(
  path: string,
  load: () => Promise<WorkflowModule | undefined>,
): Promise<{ value?: unknown; problem?: string }> {
  let mod: WorkflowModule | undefined;
  try {
    mod = await load();
  } catch (e) {
    return { problem: `${path} failed to load: ${((e as Error).message ?? String(e)).split('\n')[0]}` };
  }
  if (!mod) return { problem: `no module ${path}` };
  return mod.default === undefined ? { problem: `${path} has no default export` } : { value: mod.default };
}

/** The code step (or fast path) `handler` of the workflow, checked to be a function. */
async function loadCodeStep<T = CodeStep>(
  def: WorkflowDefinition,
  modules: WorkflowModules,
  handler: string,
  file: string,
  field = 'handler',
): Promise<T> {
  const path = codeStepModule(def, handler);
  const found = await defaultExport(path, () => modules.codeStep(handler));
  if (found.problem)
    throw new DefinitionError(file, field, `${found.problem} (a code step module default-exports its handler)`);
  if (typeof found.value !== 'function')
    throw new DefinitionError(file, field, `${path}: the default export is not a function`);
  return found.value as T;
}

/** The manifest's fast paths, each before an LLM step of the workflow. */
async function loadFastPaths(def: WorkflowDefinition, modules: WorkflowModules): Promise<Record<string, FastPath>> {
  const manifestFile = relPath(join(def.dir, 'workflow.yaml'));
  const fastPaths: Record<string, FastPath> = {};
  for (const [stepName, handler] of Object.entries(def.manifest.fastPaths)) {
    const field = `fastPaths.${stepName}`;
    const step = def.steps.find((s) => s.name === stepName);
    if (step?.kind !== 'llm')
      throw new DefinitionError(
        manifestFile,
        field,
        step ? 'a fast path goes before an LLM step; this is a code step' : `no step "${stepName}"`,
      );
    fastPaths[stepName] = await loadCodeStep<FastPath>(def, modules, handler, manifestFile, field);
  }
  return fastPaths;
}

/** The tool `name` of the workflow, checked to be a `defineTool` definition of that name. */
async function loadTool(
  def: WorkflowDefinition,
  modules: WorkflowModules,
  name: string,
  field: string,
): Promise<ToolDefinition> {
  const manifestFile = relPath(join(def.dir, 'workflow.yaml'));
  const path = toolModule(def, name);
  const found = await defaultExport(path, () => modules.tool(toolModuleName(name)));
  if (found.problem)
    throw new DefinitionError(
      manifestFile,
      field,
      `${found.problem} (a tool module default-exports defineTool({...}))`,
    );
  const tool = found.value as Partial<ToolDefinition>;
  const problem =
    typeof tool !== 'object' || tool === null
      ? 'the default export is not a tool definition'
      : tool.name !== name
        ? `the tool is named ${JSON.stringify(tool.name)}, not "${name}"`
        : typeof tool.run !== 'function'
          ? 'it has no run function'
          : !(tool.input && typeof (tool.input as ZodObject).shape === 'object')
            ? 'its input is not a zod object schema'
            : typeof tool.description !== 'string' || !tool.description
              ? 'it has no description'
              : undefined;
  if (problem) throw new DefinitionError(manifestFile, field, `${path}: ${problem}`);
  return tool as ToolDefinition;
}

/**
 * Check what needs the code: every bound argument is an argument of its tool, and every argument a
 * tool declares personal exists.
 */
function checkBindings(plugin: WorkflowPlugin): void {
  for (const step of plugin.def.steps) {
    for (const [tool, args] of Object.entries(step.bind)) {
      const shape = plugin.tools[tool]!.input.shape;
      for (const arg of Object.keys(args))
        if (!Object.hasOwn(shape, arg))
          throw new DefinitionError(
            step.file,
            `bind.${tool}.${arg}`,
            `"${arg}" is not an argument of ${tool} (${Object.keys(shape).join(', ')})`,
          );
    }
    checkConsensusTools(step, (tool) => plugin.tools[tool]?.idempotency !== undefined);
  }
}

/**
 * Import and check a loaded workflow's code: its tools (manifest `tools`) and code steps.
 * @throws DefinitionError naming the file and field of the first problem.
 */
export async function resolvePlugin(
  def: WorkflowDefinition,
  modules: WorkflowModules = bundled.get(def.manifest.name) ?? projectWorkflowModules(def),
): Promise<WorkflowPlugin> {
  const tools: Record<string, ToolDefinition> = {};
  for (const [i, name] of def.manifest.tools.entries()) tools[name] = await loadTool(def, modules, name, `tools.${i}`);
  Object.assign(tools, mcpTools(def));
  const codeSteps: Record<string, CodeStep> = {};
  for (const step of def.steps)
    if (step.kind === 'code') codeSteps[step.handler!] ??= await loadCodeStep(def, modules, step.handler!, step.file);
  const plugin = { def, tools, codeSteps, fastPaths: await loadFastPaths(def, modules) };
  checkBindings(plugin);
  return plugin;
}

/** Workflows whose modules a generated Lambda entry registered (see {@link registerBundledWorkflow}). */
const bundled = new Map<string, WorkflowModules>();

/** Called by the entry generated for a workflow's step Lambda: its code comes from these modules, not from files. */
export function registerBundledWorkflow(workflow: string, modules: WorkflowModules): void {
  bundled.set(workflow, modules);
}

const plugins = new Map<string, Promise<WorkflowPlugin>>();

/** A workflow of `statemachines/` (or of the folder `root`) with its code, once per process. */
export function loadPlugin(name: string, root: string = STATEMACHINES_DIR): Promise<WorkflowPlugin> {
  const key = join(root, name);
  let plugin = plugins.get(key);
  if (!plugin) {
    plugin = (async () => resolvePlugin(loadWorkflow(name, root)))();
    plugins.set(key, plugin);
    plugin.catch(() => plugins.delete(key));
  }
  return plugin;
}
