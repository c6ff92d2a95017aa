/**
 * The single-prompt agent's one step (manifest `singlePrompt`): the whole workflow as one LLM step
 * with every tool of the manifest. The step handler runs it when the single-prompt state machine
 * asks for it (the rollback target); `stepwise eval --mode single-prompt` and `stepwise run
 * --mode single-prompt` run it too.
 *
 * It is never less safe than the step workflow it replaces: the output guard of the steps' `guard`
 * and every argument their `bind` fills from state apply to it as well. With no earlier steps, its
 * state is what its own tools returned (see {@link toolBackedData}): a bound argument comes from a
 * tool result, never from the model, and a guard that grants ids grants only those a tool returned.
 */
import { DefinitionError } from '../../core/errors.ts';
import type { GuardOption, StepDefinition, WorkflowDefinition } from '../../definitions/workflow/schema.ts';
import type { ToolCallRecord } from '../contracts/step.ts';
import type { Toolbox } from '../tools/types.ts';

/** The name the one step runs under (the trail shows it). */
export const SINGLE_PROMPT_STEP = 'monolithic';

/** How the one step is named in errors about its definition. */
const singlePromptFile = (def: WorkflowDefinition) => `${def.manifest.name} (monolithic)`;

/**
 * The whole workflow as one LLM step: every step's instruction (code steps by their description
 * and documentation) under its name, every tool of the manifest, one edge (`DONE`), the steps'
 * bound arguments and output guard.
 * @throws DefinitionError when two steps bind the same argument from different paths, or guard with different rules files.
 */
export function singlePromptStep(def: WorkflowDefinition): StepDefinition {
  const sections = def.steps.map(
    (s) =>
      `## Part ${s.name}${s.kind === 'code' ? ' (formerly a program: do it yourself)' : ''}\n\n${s.description}\n\n${s.instruction.trim()}`,
  );
  const instruction = [
    `# ${def.manifest.name}: the whole workflow in one conversation`,
    '',
    `${def.manifest.description}`,
    '',
    `Handle the case from start to end yourself. Start with part ${def.manifest.entry}; each part below says what to do and which part comes next; where a part says "route to X", continue with part X in this same conversation. Use the tools as the parts describe; when the case is done, call route with next DONE. When something cannot be completed, do what part ${def.manifest.fallback} describes.`,
    '',
    ...sections,
  ].join('\n');
  // Outputs a tool backs stay backed (`from`): the model cannot report a ticket id no tool returned.
  // One step that routes only to DONE: an output's ties to its own step's routes (`routes`) do not apply.
  const outputs = Object.fromEntries(
    def.steps.flatMap((s) => Object.entries(s.outputs).map(([name, field]) => [name, { ...field, routes: undefined }])),
  );
  const guard = mergedGuard(def);
  return {
    name: SINGLE_PROMPT_STEP,
    description: `${def.manifest.name} in one LLM step (the single-prompt agent)`,
    version: def.manifest.version,
    kind: 'llm',
    next: ['DONE'],
    tools: [...def.manifest.tools],
    expects: [],
    requires: [],
    promptFiles: [],
    outputs,
    bind: mergedBind(def),
    readsUntrusted: true,
    temperature: 0,
    instruction,
    file: singlePromptFile(def),
    ...(guard && { guard }),
  };
}

/** Every step's `bind`, together: each tool argument any step fills from state is filled so here too. */
function mergedBind(def: WorkflowDefinition): StepDefinition['bind'] {
  const bind: StepDefinition['bind'] = {};
  for (const step of def.steps)
    for (const [tool, args] of Object.entries(step.bind))
      for (const [arg, path] of Object.entries(args)) {
        const earlier = bind[tool]?.[arg];
        if (earlier !== undefined && earlier !== path)
          throw new DefinitionError(
            singlePromptFile(def),
            `bind.${tool}.${arg}`,
            `steps bind it from ${earlier} and from ${path}: the single-prompt agent needs one source`,
          );
        bind[tool] = { ...bind[tool], [arg]: path };
      }
  return bind;
}

/**
 * The steps' output guards as one, the strictest of them: the one rules file, `fallback` when any
 * step falls back at once, the fewest regenerations, and every tool any step guards.
 */
function mergedGuard(def: WorkflowDefinition): GuardOption | undefined {
  const guarded = def.steps.filter((s) => s.guard);
  if (guarded.length === 0) return undefined;
  const files = [...new Set(guarded.map((s) => s.guard!.rules))];
  if (files.length > 1)
    throw new DefinitionError(
      singlePromptFile(def),
      'guard',
      `steps are guarded by ${files.join(' and ')}: the single-prompt agent checks its text against one rules file`,
    );
  const options = guarded.map((s) => s.guard!);
  // Without `tools` a step guards its tools that declare a reply argument; the toolbox's default does the same here.
  const explicit = options.some((o) => o.tools);
  const tools = explicit ? [...new Set(guarded.flatMap((s) => s.guard!.tools ?? s.tools))] : undefined;
  return {
    rules: files[0]!,
    onViolation: options.some((o) => o.onViolation === 'fallback') ? 'fallback' : 'regenerate',
    maxRegenerations: Math.min(...options.map((o) => o.maxRegenerations)),
    ...(tools && { tools }),
  };
}

/** A declared output the single-prompt agent takes from a tool result: `key` of it, or all of it. */
interface ToolBackedOutput {
  output: string;
  tool: string;
  key?: string;
}

/**
 * Where the single-prompt agent's state (`data`) comes from, since no earlier step wrote it: every
 * output declared `from: <tool>.<key>`, and every `object` output of a code step that calls one
 * tool (the step keeps that tool's answer, e.g. a lookup a later step routes on). What the
 * model reports never enters it.
 */
export function toolBackedData(def: WorkflowDefinition): ToolBackedOutput[] {
  return def.steps.flatMap((step) =>
    Object.entries(step.outputs).flatMap(([output, field]): ToolBackedOutput[] => {
      if (field.from) {
        const [tool, key] = field.from.split('.') as [string, string];
        return [{ output, tool, key }];
      }
      const onlyTool = step.kind === 'code' && step.tools.length === 1 ? step.tools[0]! : undefined;
      return onlyTool && field.type === 'object' ? [{ output, tool: onlyTool }] : [];
    }),
  );
}

/**
 * The single-prompt agent's toolbox, outermost: after each successful call, the outputs that tool
 * backs are written into `data` (the scope the bound arguments and the guard read), so a later
 * call is bound and checked against what the tools returned so far.
 */
export function withToolBackedData(toolbox: Toolbox, def: WorkflowDefinition, data: Record<string, unknown>): Toolbox {
  const sources = toolBackedData(def);
  return {
    spec: (name) => toolbox.spec(name),
    async execute(name, args, ctx): Promise<ToolCallRecord> {
      const record = await toolbox.execute(name, args, ctx);
      const result = record.result;
      if (record.error !== undefined || typeof result !== 'object' || result === null) return record;
      for (const { output, tool, key } of sources) {
        if (tool !== name) continue;
        if (key === undefined) data[output] = result;
        else if (Object.hasOwn(result, key)) data[output] = (result as Record<string, unknown>)[key];
      }
      return record;
    },
  };
}
