import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { didYouMean } from '../../core/did-you-mean.ts';
import { DefinitionError } from '../../core/errors.ts';
import { STATEMACHINES_DIR } from '../../core/paths.ts';
import {
  checkDefinition,
  type FrontmatterFile,
  parseFrontmatter,
  readDefinitionYaml,
  readFrontmatterFile,
  relPath,
} from '../definition-file.ts';
import { validateConsensus } from './consensus.ts';
import { checkConstructOptions, checkConstructRefs, validateConstructs } from './constructs/index.ts';
import { failureEdges, innerEntries } from './constructs/scopes.ts';
import { validateCounters } from './counters.ts';
import { inputSchema } from './input.ts';
import { validateMcp, workflowToolNames } from './mcp.ts';
import { CHECKPOINT_DATA_KEY } from './pause.ts';
import { DONE, ManifestSchema, type StepDefinition, StepFrontmatterSchema, type WorkflowDefinition } from './schema.ts';

/** Parse one step file: YAML frontmatter validated with zod, markdown body as instruction. */
export function parseStepFile(file: string, text: string): StepDefinition {
  return stepFromFile(file, parseFrontmatter(text, relPath(file)));
}

function stepFromFile(file: string, { frontmatter, body }: FrontmatterFile): StepDefinition {
  const fm = checkDefinition(StepFrontmatterSchema, frontmatter, relPath(file));
  checkConstructOptions(fm, relPath(file));
  if (fm.kind === 'code' && !fm.handler)
    throw new DefinitionError(relPath(file), 'handler', 'a code step needs a handler');
  if (fm.kind === 'llm' && fm.handler)
    throw new DefinitionError(relPath(file), 'handler', 'only code steps have a handler');
  const instruction = body.trim();
  if (fm.kind === 'llm' && !instruction)
    throw new DefinitionError(relPath(file), '(body)', 'an LLM step needs an instruction body');
  return { ...fm, instruction, file: relPath(file) };
}

/**
 * A step's `promptFiles`, appended to its instruction as definitions (JSON: a bundle parses no YAML, and the model
 * reads either).
 */
function withPromptFiles(step: StepDefinition, dir: string): StepDefinition {
  if (!step.promptFiles.length) return step;
  if (step.kind !== 'llm') throw new DefinitionError(step.file, 'promptFiles', 'only LLM steps have a prompt');
  const sections = step.promptFiles.map((path, i) => {
    const file = join(dir, path);
    if (process.env.STEPWISE_LAMBDA_BUNDLE === undefined && !existsSync(file))
      throw new DefinitionError(step.file, `promptFiles.${i}`, `no file ${path} in the workflow folder`);
    return `## Definitions: ${path}\n\n${JSON.stringify(readDefinitionYaml(file), null, 2)}`;
  });
  return { ...step, instruction: [step.instruction, ...sections].join('\n\n') };
}

/** Graph checks: edges exist, every step reachable from the entry, a terminal reachable from every step. */
export function validateGraph(def: WorkflowDefinition): void {
  const { manifest, steps } = def;
  const manifestFile = relPath(join(def.dir, 'workflow.yaml'));
  const byName = stepsByName(steps);
  if (!byName.has(manifest.entry)) throw new DefinitionError(manifestFile, 'entry', `unknown step "${manifest.entry}"`);
  if (!byName.has(manifest.fallback))
    throw new DefinitionError(manifestFile, 'fallback', `unknown step "${manifest.fallback}"`);
  validateMcp(manifestFile, manifest.tools, manifest.mcp);
  for (const s of steps) checkStep(s, byName, workflowToolNames(manifest));
  checkConstructRefs(steps, byName);
  checkReachable(def, byName);
  checkEndsReachDone(steps);
}

/** The steps by name; two steps of one name are an error. */
function stepsByName(steps: readonly StepDefinition[]): Map<string, StepDefinition> {
  const byName = new Map<string, StepDefinition>();
  for (const s of steps) {
    const twin = byName.get(s.name);
    if (twin) throw new DefinitionError(s.file, 'name', `duplicate step name "${s.name}" (also in ${twin.file})`);
    byName.set(s.name, s);
  }
  return byName;
}

/** One step's references: its edges, required tools, outputs, pause, bindings and tools all name what exists. */
function checkStep(s: StepDefinition, byName: ReadonlyMap<string, StepDefinition>, manifestTools: string[]): void {
  const notAStepTool = (tool: string) => `"${tool}" is not one of the step's tools (${s.tools.join(', ') || 'none'})`;
  s.next.forEach((n, i) => {
    if (n !== DONE && !byName.has(n))
      throw new DefinitionError(s.file, `next.${i}`, `unknown step "${n}"${didYouMean(n, [...byName.keys(), DONE])}`);
  });
  s.requires.forEach((t, i) => {
    if (!s.tools.includes(t))
      throw new DefinitionError(s.file, `requires.${i}`, `"${t}" is not one of the step's tools`);
  });
  for (const [name, field] of Object.entries(s.outputs)) {
    if (field.metric && field.type !== 'string')
      throw new DefinitionError(s.file, `outputs.${name}.metric`, 'only a string output is counted by value');
    const tool = field.from?.split('.')[0];
    if (tool !== undefined && !s.tools.includes(tool))
      throw new DefinitionError(s.file, `outputs.${name}.from`, notAStepTool(tool));
    checkEnumOutput(s, name, field);
  }
  checkPause(s, byName);
  for (const tool of Object.keys(s.bind)) {
    if (s.kind === 'code')
      throw new DefinitionError(
        s.file,
        `bind.${tool}`,
        'only LLM steps bind tool arguments (a code step passes its own)',
      );
    if (!s.tools.includes(tool)) throw new DefinitionError(s.file, `bind.${tool}`, notAStepTool(tool));
  }
  s.tools.forEach((t, i) => {
    if (!manifestTools.includes(t))
      throw new DefinitionError(
        s.file,
        `tools.${i}`,
        `unknown tool "${t}"${didYouMean(t, manifestTools)} (the manifest declares: ${manifestTools.join(', ') || 'none'})`,
      );
  });
}

/** An `enum` output is a string; its `routes` name every value once and only the step's declared edges. */
function checkEnumOutput(s: StepDefinition, name: string, field: StepDefinition['outputs'][string]): void {
  const at = (key: string) => `outputs.${name}.${key}`;
  if (field.enum && field.type !== 'string')
    throw new DefinitionError(s.file, at('enum'), 'only a string output takes an enum');
  if (!field.routes) return;
  if (!field.enum) throw new DefinitionError(s.file, at('routes'), '`routes` needs the `enum` it maps');
  const keys = Object.keys(field.routes);
  const unmapped = field.enum.filter((v) => !keys.includes(v));
  const unknown = keys.filter((k) => !field.enum!.includes(k));
  if (unmapped.length || unknown.length)
    throw new DefinitionError(
      s.file,
      at('routes'),
      `one entry per enum value (${[...unmapped.map((v) => `missing ${v}`), ...unknown.map((k) => `unknown ${k}`)].join(', ')})`,
    );
  for (const [value, edges] of Object.entries(field.routes)) {
    const undeclared = edges.find((e) => !s.next.includes(e));
    if (undeclared !== undefined)
      throw new DefinitionError(s.file, at(`routes.${value}`), `"${undeclared}" is not a declared edge of the step`);
  }
}

/** Every step is reachable from the entry or the fallback, through edges and pause time-outs. */
function checkReachable({ manifest, steps }: WorkflowDefinition, byName: ReadonlyMap<string, StepDefinition>): void {
  const reachable = new Set<string>([manifest.entry, manifest.fallback]);
  const queue = [manifest.entry, manifest.fallback];
  while (queue.length) {
    const step = byName.get(queue.pop()!)!;
    const inner = [...innerEntries(step).map((e) => e.entry), ...failureEdges(step)];
    for (const n of [...step.next, ...(step.pause ? [step.pause.onTimeout] : []), ...inner]) {
      if (n !== DONE && !reachable.has(n)) {
        reachable.add(n);
        queue.push(n);
      }
    }
  }
  for (const s of steps) {
    if (!reachable.has(s.name))
      throw new DefinitionError(s.file, 'name', `step "${s.name}" is unreachable from entry "${manifest.entry}"`);
  }
}

/** Every step has a route that ends in DONE. */
function checkEndsReachDone(steps: readonly StepDefinition[]): void {
  // Fixpoint: a step ends if it routes to DONE or to a step that ends.
  const ends = new Set<string>();
  for (let changed = true; changed; ) {
    changed = false;
    for (const s of steps) {
      if (!ends.has(s.name) && s.next.some((n) => n === DONE || ends.has(n))) {
        ends.add(s.name);
        changed = true;
      }
    }
  }
  for (const s of steps) {
    if (!ends.has(s.name)) throw new DefinitionError(s.file, 'next', `no route from "${s.name}" ever reaches DONE`);
  }
}

/** A pause escalates to a step, on declared edges, naming a declared output. */
function checkPause(s: StepDefinition, byName: ReadonlyMap<string, StepDefinition>): void {
  if (!s.pause) return;
  const { onTimeout, edges = [], actions, timeoutSeconds, heartbeatSeconds } = s.pause;
  if (!byName.has(onTimeout)) throw new DefinitionError(s.file, 'pause.onTimeout', `unknown step "${onTimeout}"`);
  edges.forEach((edge, i) => {
    if (!s.next.includes(edge))
      throw new DefinitionError(s.file, `pause.edges.${i}`, `"${edge}" is not a declared edge (${s.next.join(', ')})`);
  });
  if (!s.pause.edges && s.next.every((n) => n === DONE))
    throw new DefinitionError(s.file, 'pause', 'the step only ends the workflow: nothing to pause before');
  for (const other of byName.values())
    if (other.outputs[CHECKPOINT_DATA_KEY])
      throw new DefinitionError(
        other.file,
        `outputs.${CHECKPOINT_DATA_KEY}`,
        `reserved: ${s.name} pauses and stores the resumer's output there`,
      );
  if (s.pause.when !== undefined && s.outputs[s.pause.when]?.type !== 'boolean')
    throw new DefinitionError(s.file, 'pause.when', `"${s.pause.when}" is not a boolean output of the step`);
  if (actions !== undefined && !s.outputs[actions])
    throw new DefinitionError(s.file, 'pause.actions', `"${actions}" is not one of the step's outputs`);
  if (heartbeatSeconds !== undefined && heartbeatSeconds >= timeoutSeconds)
    throw new DefinitionError(s.file, 'pause.heartbeatSeconds', `must be less than timeoutSeconds (${timeoutSeconds})`);
}

/** Load and validate a workflow folder (uncached). */
export function loadWorkflowFrom(dir: string): WorkflowDefinition {
  const manifestFile = join(dir, 'workflow.yaml');
  if (!existsSync(manifestFile))
    throw new DefinitionError(relPath(manifestFile), '(file)', 'workflow manifest not found');
  const manifest = checkDefinition(ManifestSchema, readDefinitionYaml(manifestFile), relPath(manifestFile));
  const stepsDir = join(dir, 'steps');
  if (!existsSync(stepsDir)) throw new DefinitionError(relPath(stepsDir), '(folder)', 'steps folder not found');
  const steps = readdirSync(stepsDir)
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => {
      const file = join(stepsDir, f);
      const step = stepFromFile(file, readFrontmatterFile(file));
      if (`${step.name}.md` !== f)
        throw new DefinitionError(step.file, 'name', `must match the file name (${f.replace(/\.md$/, '')})`);
      return step;
    });
  if (steps.length === 0) throw new DefinitionError(relPath(stepsDir), '(folder)', 'no step files (*.md)');
  const def: WorkflowDefinition = { manifest, steps: steps.map((s) => withPromptFiles(s, dir)), dir };
  validateGraph(def);
  validateCounters(def);
  for (const step of steps) validateConsensus(step);
  validateConstructs(def);
  checkManifestInput(def, relPath(manifestFile));
  if (manifest.name !== dir.split(/[\\/]/).pop())
    throw new DefinitionError(relPath(manifestFile), 'name', `must match the folder name`);
  return def;
}

/** An email workflow's input is the email trigger's; any other may declare a JSON Schema, which must convert. */
function checkManifestInput(def: WorkflowDefinition, manifestFile: string): void {
  const { input, triggers } = def.manifest;
  if (input && triggers.some((t) => t.type === 'email'))
    throw new DefinitionError(
      manifestFile,
      'input',
      "an email workflow takes the email trigger's input ({ email }); remove input or the email trigger",
    );
  if (input) inputSchema(def, manifestFile);
}

const cache = new Map<string, WorkflowDefinition>();

/**
 * Load a workflow by name from `statemachines/`, once per process: the step instructions are
 * read on the first call (a Lambda cold start) and reused for every later invocation.
 */
export function loadWorkflow(name: string, root: string = STATEMACHINES_DIR): WorkflowDefinition {
  const dir = join(root, name);
  const hit = cache.get(dir);
  if (hit) return hit;
  if (!existsSync(dir) || !statSync(dir).isDirectory()) {
    const known = listWorkflows(root);
    throw new DefinitionError(
      relPath(dir),
      '(folder)',
      `unknown workflow "${name}"${didYouMean(name, known)} (known: ${known.join(', ') || 'none'})`,
    );
  }
  const def = loadWorkflowFrom(dir);
  cache.set(dir, def);
  return def;
}

/** Workflow folders (those with a workflow.yaml) under `statemachines/`. */
export function listWorkflows(root: string = STATEMACHINES_DIR): string[] {
  if (!existsSync(root)) return [];
  return readdirSync(root)
    .filter((d) => existsSync(join(root, d, 'workflow.yaml')))
    .sort();
}

export function getStep(def: WorkflowDefinition, name: string): StepDefinition {
  const step = def.steps.find((s) => s.name === name);
  if (!step) throw new DefinitionError(def.manifest.name, 'step', `unknown step "${name}"`);
  return step;
}
