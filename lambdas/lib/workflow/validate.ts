/**
 * `stepwise validate`: everything about a workflow that can be checked without running it. The
 * first problem throws a DefinitionError naming the file and the field; `graph` and `synth` run
 * the same checks, so an unregistered handler never shows up first at run time.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { loadEvalCases } from '../../evals/schema.ts';
import { loadOfflineRules, OFFLINE_RULES_FILE, OfflineModel } from '../../models/offline.ts';
import { relPath } from '../definition-file.ts';
import { DefinitionError } from '../errors.ts';
import { loadGuardRules } from './guard-schema.ts';
import { isEmailWorkflow } from './input.ts';
import { loadWorkflow } from './loader.ts';
import { STATEMACHINES_DIR } from '../project.ts';
import { resolvePlugin, type WorkflowPlugin } from './plugin.ts';

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
    if (isEmailWorkflow(def) && !c.input.email) throw new DefinitionError(where, 'input.email', `${def.manifest.name} starts from email: a case gives input.email`);
    if (!isEmailWorkflow(def) && !c.input.payload && !c.input.turns)
      throw new DefinitionError(where, 'input.payload', `${def.manifest.name} has no email trigger: a case gives input.payload (or input.turns)`);
    for (const tool of Object.keys(c.input.mock_function_responses))
      if (!plugin.tools[tool]) throw new DefinitionError(where, `input.mock_function_responses.${tool}`, `not a tool of ${def.manifest.name}`);
    c.expected_output.expected_steps?.forEach((s, i) => {
      if (!stepNames.has(s.step_name)) throw new DefinitionError(where, `expected_output.expected_steps.${i}.step_name`, `no step "${s.step_name}"`);
    });
  }
  return cases.length;
}

/**
 * Validate a workflow of `statemachines/` (or any folder under `root`): graph and frontmatter,
 * input schema, code steps and tools resolve, bound arguments exist, offline-model rules route
 * only along declared edges and call only allowed tools, eval cases parse and fit.
 * @throws DefinitionError for the first problem.
 */
export async function validateWorkflow(name: string, root: string = STATEMACHINES_DIR): Promise<Validated> {
  const def = loadWorkflow(name, root);
  const plugin = await resolvePlugin(def);
  const warnings: string[] = [];
  let offlineRules = 0;
  const llmSteps = def.steps.filter((s) => s.kind === 'llm').length;
  if (existsSync(join(def.dir, OFFLINE_RULES_FILE))) {
    const rules = loadOfflineRules(def);
    new OfflineModel(rules); // checks the patterns and keyword lists the rules name
    offlineRules = Object.values(rules.steps).flat().length;
  }
  else if (llmSteps) warnings.push(`${relPath(join(def.dir, OFFLINE_RULES_FILE))}: missing: --model offline cannot run the ${llmSteps} LLM step(s)`);
  for (const step of def.steps) loadGuardRules(def, step);
  const evalCases = checkEvalCases(plugin);
  return { plugin, counts: { steps: def.steps.length, tools: Object.keys(plugin.tools).length, offlineRules, evalCases }, warnings };
}
