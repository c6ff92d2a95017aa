/**
 * A workflow's TypeScript, found by convention: code steps are `lambdas/workflows/<workflow>/steps/<handler>.ts`
 * and tools `lambdas/workflows/<workflow>/tools/<tool, _ as ->.ts`, each with a default export.
 *
 * The imports below are template literals with a static prefix and suffix: esbuild turns them into
 * glob imports, so a step Lambda bundle contains its workflow's modules without the engine naming
 * one, and Node (tsx, vitest) resolves them the same way at run time.
 */
import { existsSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ZodObject } from 'zod';
import { checkConsensusTools } from '../../steps/consensus.ts';
import type { FastPath } from '../../steps/fast-path.ts';
import type { CodeStep } from '../../steps/types.ts';
import { toolModuleName, type ToolDefinition } from '../../tools/types.ts';
import { DefinitionError } from '../errors.ts';
import { relPath } from '../definition-file.ts';
import { loadWorkflow, STATEMACHINES_DIR } from './loader.ts';
import type { WorkflowDefinition } from './schema.ts';

/** `lambdas/workflows`: one folder of code per workflow. */
export const WORKFLOW_CODE_DIR = join(dirname(fileURLToPath(import.meta.url)), '../../workflows');

/** A workflow with its code: what the compiler, the step handler and the local session need. */
export interface WorkflowPlugin {
  readonly def: WorkflowDefinition;
  /** Every tool of the manifest, by name. */
  readonly tools: Readonly<Record<string, ToolDefinition>>;
  /** Every code step's handler, by its frontmatter `handler`. */
  readonly codeSteps: Readonly<Record<string, CodeStep>>;
  /** Every fast path of the manifest (`fastPaths`), by the LLM step it runs before. */
  readonly fastPaths?: Readonly<Record<string, FastPath>>;
}

export const codeStepModule = (workflow: string, handler: string) => `lambdas/workflows/${workflow}/steps/${handler}.ts`;
export const toolModule = (workflow: string, tool: string) => `lambdas/workflows/${workflow}/tools/${toolModuleName(tool)}.ts`;

/** The default export of a workflow module, or why there is none (for a DefinitionError). */
async function defaultExport(path: string, load: () => Promise<{ default?: unknown }>): Promise<{ value?: unknown; problem?: string }> {
  // Bundled, the module is inside the bundle and not on disk: only a failed import says it is missing.
  const onDisk = existsSync(join(WORKFLOW_CODE_DIR, '../..', path));
  try {
    const mod = await load();
    return mod.default === undefined ? { problem: `${path} has no default export` } : { value: mod.default };
  } catch (e) {
    if (!onDisk) return { problem: `no module ${path}` };
    return { problem: `${path} failed to load: ${((e as Error).message ?? String(e)).split('\n')[0]}` };
  }
}

// In a workflow's Lambda bundle, STEPWISE_BUNDLED_WORKFLOW is that workflow's name, defined at build
// time (StepwiseFunction): esbuild then globs its folder only, and the bundle holds no other workflow's
// code (nor definitions: another workflow fails to load, see lambdas/lib/definition-file.ts).
const importCodeStep = (workflow: string, handler: string) => import(`../../workflows/${process.env.STEPWISE_BUNDLED_WORKFLOW ?? workflow}/steps/${handler}.ts`);
const importTool = (workflow: string, file: string) => import(`../../workflows/${process.env.STEPWISE_BUNDLED_WORKFLOW ?? workflow}/tools/${file}.ts`);

/** The code step (or fast path) `handler` of `workflow`, checked to be a function. */
async function loadCodeStep<T = CodeStep>(def: WorkflowDefinition, handler: string, file: string, field = 'handler'): Promise<T> {
  const workflow = def.manifest.name;
  const found = await defaultExport(codeStepModule(workflow, handler), () => importCodeStep(workflow, handler));
  if (found.problem) throw new DefinitionError(file, field, `${found.problem} (a code step module default-exports its handler)`);
  if (typeof found.value !== 'function') throw new DefinitionError(file, field, `${codeStepModule(workflow, handler)}: the default export is not a function`);
  return found.value as T;
}

/** The manifest's fast paths, each before an LLM step of the workflow. */
async function loadFastPaths(def: WorkflowDefinition): Promise<Record<string, FastPath>> {
  const manifestFile = relPath(join(def.dir, 'workflow.yaml'));
  const fastPaths: Record<string, FastPath> = {};
  for (const [stepName, handler] of Object.entries(def.manifest.fastPaths)) {
    const field = `fastPaths.${stepName}`;
    const step = def.steps.find((s) => s.name === stepName);
    if (step?.kind !== 'llm') throw new DefinitionError(manifestFile, field, step ? 'a fast path goes before an LLM step; this is a code step' : `no step "${stepName}"`);
    fastPaths[stepName] = await loadCodeStep<FastPath>(def, handler, manifestFile, field);
  }
  return fastPaths;
}

/** The tool `name` of `workflow`, checked to be a `defineTool` definition of that name. */
async function loadTool(def: WorkflowDefinition, name: string, field: string): Promise<ToolDefinition> {
  const workflow = def.manifest.name;
  const manifestFile = relPath(join(def.dir, 'workflow.yaml'));
  const path = toolModule(workflow, name);
  const found = await defaultExport(path, () => importTool(workflow, toolModuleName(name)));
  if (found.problem) throw new DefinitionError(manifestFile, field, `${found.problem} (a tool module default-exports defineTool({...}))`);
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
          throw new DefinitionError(step.file, `bind.${tool}.${arg}`, `"${arg}" is not an argument of ${tool} (${Object.keys(shape).join(', ')})`);
    }
    checkConsensusTools(step, (tool) => plugin.tools[tool]?.idempotency !== undefined);
  }
}

/**
 * Import and check a loaded workflow's code: its tools (manifest `tools`) and code steps.
 * @throws DefinitionError naming the file and field of the first problem.
 */
export async function resolvePlugin(def: WorkflowDefinition): Promise<WorkflowPlugin> {
  const tools: Record<string, ToolDefinition> = {};
  for (const [i, name] of def.manifest.tools.entries()) tools[name] = await loadTool(def, name, `tools.${i}`);
  const codeSteps: Record<string, CodeStep> = {};
  for (const step of def.steps) if (step.kind === 'code') codeSteps[step.handler!] ??= await loadCodeStep(def, step.handler!, step.file);
  const plugin = { def, tools, codeSteps, fastPaths: await loadFastPaths(def) };
  checkBindings(plugin);
  return plugin;
}

const plugins = new Map<string, Promise<WorkflowPlugin>>();

/** A workflow of `statemachines/` with its code, once per process. */
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

/** Where a workflow's code lives, relative to the project root (for messages and scaffolding). */
export const workflowCodeDir = (workflow: string) => relative(join(WORKFLOW_CODE_DIR, '../..'), join(WORKFLOW_CODE_DIR, workflow)).split('\\').join('/');
