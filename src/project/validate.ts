/**
 * `stepwise validate`: everything about a workflow that can be checked without running it. The
 * first problem throws a DefinitionError naming the file and the field; `graph` and `synth` run
 * the same checks, so an unregistered handler never shows up first at run time.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { DefinitionError } from '../core/errors.ts';
import { STATEMACHINES_DIR } from '../core/paths.ts';
import { relPath } from '../definitions/definition-file.ts';
import { loadEvalCases } from '../definitions/eval-cases.ts';
import { modelIdProblem } from '../definitions/model-ids.ts';
import { loadOfflineRules, OFFLINE_RULES_FILE } from '../definitions/offline-model.ts';
import { loadGuardRules } from '../definitions/workflow/guard.ts';
import { isEmailWorkflow } from '../definitions/workflow/input.ts';
import { loadWorkflow } from '../definitions/workflow/loader.ts';
import { readMcpLock } from '../definitions/workflow/mcp.ts';
import { OfflineModel } from '../runtime/models/offline.ts';
import { checkPins, listedTools } from '../runtime/tools/mcp/pins.ts';

/** The project's config file, which names an environment's model. */
const CONFIG_FILE = 'stepwise.config.ts';

import { resolvePlugin, type WorkflowPlugin } from '../runtime/plugin.ts';

export interface Validated {
  plugin: WorkflowPlugin;
  /** LLM steps, offline rules and eval cases found (for the summary line). */
  counts: { steps: number; tools: number; offlineRules: number; evalCases: number };
  /** Not errors, but worth saying (no offline rules: the workflow runs only with Bedrock). */
  warnings: string[];
}

/** Eval cases must fit the workflow: the input its trigger takes, its tools, its steps. */
function checkEvalCases(plugin: WorkflowPlugin): number {
  const { def } = plugin;
  const cases = loadEvalCases(def.dir);
  const file = (id: string) => relPath(join(def.dir, 'evals', `${id}.yaml`));
  const stepNames = new Set(def.steps.map((s) => s.name));
  for (const c of cases) {
    const where = file(c.scenario_id);
    if (isEmailWorkflow(def) && !c.input.email)
      throw new DefinitionError(
        where,
        'input.email',
        `${def.manifest.name} starts from email: a case gives input.email`,
      );
    if (!isEmailWorkflow(def) && !c.input.payload && !c.input.turns)
      throw new DefinitionError(
        where,
        'input.payload',
        `${def.manifest.name} has no email trigger: a case gives input.payload (or input.turns)`,
      );
    for (const tool of Object.keys(c.input.mock_function_responses))
      if (!plugin.tools[tool])
        throw new DefinitionError(where, `input.mock_function_responses.${tool}`, `not a tool of ${def.manifest.name}`);
    c.expected_output.expected_steps?.forEach((s, i) => {
      if (!stepNames.has(s.step_name))
        throw new DefinitionError(where, `expected_output.expected_steps.${i}.step_name`, `no step "${s.step_name}"`);
    });
  }
  return cases.length;
}

/**
 * The model id has the provider's form, in the manifest and in the environment's config, and a
 * config that replaces the manifest's model is said (a warning: deployed, the config's id runs).
 */
function checkModel(def: WorkflowPlugin['def'], environment: ValidateOptions['environment']): string[] {
  const manifestFile = relPath(join(def.dir, 'workflow.yaml'));
  const problem = modelIdProblem(def.manifest.model.id);
  if (problem) throw new DefinitionError(manifestFile, 'model.id', problem);
  if (
    environment?.modelProvider !== 'bedrock' ||
    environment.modelId === undefined ||
    environment.modelId === def.manifest.model.id
  )
    return [];
  const { name, modelId } = environment;
  const configProblem = modelIdProblem(modelId);
  if (configProblem) throw new DefinitionError(CONFIG_FILE, `environments.${name}.modelId`, configProblem);
  return [
    `${CONFIG_FILE}: environments.${name}.modelId: ${modelId} replaces ${manifestFile}'s model.id ${def.manifest.model.id} in env ${name}`,
  ];
}

export interface ValidateOptions {
  /**
   * The deployment environment whose model settings are checked against the manifest (`resolveEnvironment`).
   * @default none: the manifest alone
   */
  environment?: { name: string; modelProvider: string; modelId?: string };
  /**
   * Compare the MCP tools' pins with what their servers list now. Off for a run that never calls
   * them (`stepwise eval`: the case's mocks answer, checked against the pins). @default true
   */
  mcpServers?: boolean;
  /** Check the eval cases. Off for `stepwise run`, which runs none of them. @default true */
  evalCases?: boolean;
}

/**
 * Validate a workflow of `statemachines/` (or any folder under `root`): graph and frontmatter,
 * input schema, the model id, code steps and tools resolve, bound arguments exist, offline-model
 * rules route only along declared edges, call only allowed tools and read what the step sees,
 * eval cases parse and fit (unless `evalCases: false`), MCP tools' pinned schemas equal what their servers list.
 * @throws DefinitionError for the first problem.
 */
export async function validateWorkflow(
  name: string,
  root: string = STATEMACHINES_DIR,
  options: ValidateOptions = {},
): Promise<Validated> {
  const def = loadWorkflow(name, root);
  const plugin = await resolvePlugin(def);
  const warnings: string[] = [];
  const llmSteps = def.steps.filter((s) => s.kind === 'llm').length;
  if (llmSteps) warnings.push(...checkModel(def, options.environment));
  let offlineRules = 0;
  if (existsSync(join(def.dir, OFFLINE_RULES_FILE))) {
    const rules = loadOfflineRules(def);
    new OfflineModel(rules); // checks the patterns and keyword lists the rules name
    offlineRules = Object.values(rules.steps).flat().length;
  } else if (llmSteps)
    warnings.push(
      `${relPath(join(def.dir, OFFLINE_RULES_FILE))}: missing: --model offline cannot run the ${llmSteps} LLM step(s)`,
    );
  for (const step of def.steps) loadGuardRules(def, step);
  // The pins are only worth what the servers list now: a changed schema fails here, not in a run.
  if (def.manifest.mcp && options.mcpServers !== false) checkPins(def, readMcpLock(def.dir), await listedTools(def));
  const evalCases = options.evalCases === false ? 0 : checkEvalCases(plugin);
  return {
    plugin,
    counts: { steps: def.steps.length, tools: Object.keys(plugin.tools).length, offlineRules, evalCases },
    warnings,
  };
}
