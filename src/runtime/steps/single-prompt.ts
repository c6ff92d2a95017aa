/**
 * The single-prompt agent's one step (manifest `singlePrompt`): the whole workflow as one LLM step
 * with every tool of the manifest. The step handler runs it when the single-prompt state machine
 * asks for it; the eval runner's monolithic mode runs it to compare with the step workflow.
 */
import type { StepDefinition, WorkflowDefinition } from '../../definitions/workflow/schema.ts';

/** The name the one step runs under (the trail shows it). */
export const MONOLITHIC_STEP = 'monolithic';

/**
 * The whole workflow as one LLM step: every step's instruction (code steps by their description
 * and documentation) under its name, every tool of the manifest, one edge (`DONE`).
 */
export function monolithicStep(def: WorkflowDefinition): StepDefinition {
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
  const outputs = Object.fromEntries(
    def.steps.flatMap((s) => Object.entries(s.outputs).map(([name, field]) => [name, { ...field, from: undefined }])),
  );
  return {
    name: MONOLITHIC_STEP,
    description: `${def.manifest.name} in one LLM step (legacy mode)`,
    version: def.manifest.version,
    kind: 'llm',
    next: ['DONE'],
    tools: [...def.manifest.tools],
    requires: [],
    promptFiles: [],
    outputs,
    bind: {},
    readsUntrusted: true,
    temperature: 0,
    instruction,
    file: `${def.manifest.name} (monolithic)`,
  };
}
