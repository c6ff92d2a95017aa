/**
 * The checks of the construct steps (`map`, `parallel`, `workflow`, `wait`) that the loader runs:
 * each kind has its option and only its own, decides nothing itself (one edge, no tools, no model),
 * reads paths of the state that some step produces, and fits the limits of its state.
 */
import { dirname } from 'node:path';
import { DefinitionError } from '../../../core/errors.ts';
import { CHECKPOINT_DATA_KEY } from '../pause.ts';
import type { StepDefinition, StepFrontmatter, WorkflowDefinition } from '../schema.ts';
import { checkEventSteps, eventOutputs, failureField } from './event.ts';
import { validateMap } from './map.ts';
import { CONSTRUCT_KINDS, checkScopes, failureEdges, isConstruct, workflowScopes } from './scopes.ts';
import { checkWorkflowCalls } from './workflow-step.ts';

/** Options of an LLM or code step that a construct step has no use for. */
const DECIDING_OPTIONS = ['handler', 'consensus', 'pause', 'guard', 'models'] as const;

/**
 * A construct step has the option of its kind and no other, and none of a deciding step's.
 * @throws DefinitionError naming the field.
 */
export function checkConstructOptions(fm: StepFrontmatter, file: string): void {
  for (const kind of CONSTRUCT_KINDS)
    if (fm[kind] !== undefined && fm.kind !== kind)
      throw new DefinitionError(file, kind, `only a ${kind} step has this option (this one is ${fm.kind})`);
  if (!isConstruct(fm)) return;
  if (fm[fm.kind as (typeof CONSTRUCT_KINDS)[number]] === undefined)
    throw new DefinitionError(file, fm.kind, `a ${fm.kind} step needs its ${fm.kind} option`);
  for (const option of DECIDING_OPTIONS)
    if (fm[option] !== undefined)
      throw new DefinitionError(file, option, `a ${fm.kind} step decides nothing itself: no ${option}`);
  const lists = { tools: fm.tools, requires: fm.requires, promptFiles: fm.promptFiles };
  for (const [field, list] of Object.entries(lists))
    if (list.length) throw new DefinitionError(file, field, `a ${fm.kind} step calls no tools and has no prompt`);
  if (Object.keys(fm.outputs).length || Object.keys(fm.bind).length)
    throw new DefinitionError(
      file,
      Object.keys(fm.outputs).length ? 'outputs' : 'bind',
      `a ${fm.kind} step declares its outputs in its ${fm.kind} option`,
    );
  if (fm.next.length !== 1)
    throw new DefinitionError(file, 'next', `a ${fm.kind} step goes on to one step (it decides no route)`);
}

/**
 * The steps a construct step names (item entry, branch entries, failure route) exist.
 * @throws DefinitionError naming the field.
 */
export function checkConstructRefs(steps: readonly StepDefinition[], byName: ReadonlyMap<string, unknown>): void {
  for (const step of steps) {
    const refs: [string, string][] = [
      ...(step.map ? ([['map.entry', step.map.entry]] as [string, string][]) : []),
      ...Object.entries(step.parallel?.branches ?? {}).map(([b, e]): [string, string] => [`parallel.branches.${b}`, e]),
      ...failureEdges(step).map((to): [string, string] => [failureField(step), to]),
    ];
    for (const [field, name] of refs)
      if (!byName.has(name)) throw new DefinitionError(step.file, field, `unknown step "${name}"`);
  }
}

/** The `data` fields some step produces: declared outputs, map outputs, branch names, a child's outputs. */
function producedFields(def: WorkflowDefinition): Set<string> {
  return new Set([
    CHECKPOINT_DATA_KEY,
    ...def.steps.flatMap((s) => [
      ...Object.keys(s.outputs),
      ...(s.map ? [s.map.output, s.map.as, `${s.map.as}Index`] : []),
      ...Object.keys(s.parallel?.branches ?? {}),
      ...(s.workflow?.outputs ?? []),
      ...eventOutputs(s),
    ]),
  ]);
}

/** The state paths a construct step reads, by field. */
function pathsRead(step: StepDefinition): [string, string][] {
  if (step.map) return [['map.items', step.map.items]];
  if (step.wait?.until) return [['wait.until', step.wait.until]];
  if (step.event) return [['event.key', step.event.key]];
  if (step.workflow) return Object.entries(step.workflow.input).map(([k, p]) => [`workflow.input.${k}`, p]);
  return [];
}

/**
 * Every path a construct step reads names a field some step produces (`data.`) or the input
 * declares (`input.`, when the manifest has an input schema with properties).
 * @throws DefinitionError naming the field and the missing name.
 */
function checkPathsRead(def: WorkflowDefinition): void {
  const produced = producedFields(def);
  const declared = (def.manifest.input?.schema as { properties?: Record<string, unknown> } | undefined)?.properties;
  for (const step of def.steps)
    for (const [field, path] of pathsRead(step)) {
      const [root, name] = path.split('.') as [string, string];
      if (root === 'data' && !produced.has(name))
        throw new DefinitionError(step.file, field, `no step produces "${name}" (${path})`);
      if (root === 'input' && declared && !Object.hasOwn(declared, name))
        throw new DefinitionError(step.file, field, `the input schema has no "${name}" (${path})`);
    }
}

/**
 * The construct checks of a loaded workflow: scopes, paths read, each map's limits, and the
 * workflows it starts (read from the folders beside it).
 * @throws DefinitionError in one line.
 */
export function validateConstructs(def: WorkflowDefinition): void {
  if (!def.steps.some(isConstruct)) return;
  const scopeOf = checkScopes(def);
  checkEventSteps(def, scopeOf);
  checkPathsRead(def);
  const { scopes } = workflowScopes(def);
  for (const scope of scopes) if (scope.owner?.kind === 'map') validateMap(scope.owner, def, scope);
  checkWorkflowCalls(def, dirname(def.dir));
}
