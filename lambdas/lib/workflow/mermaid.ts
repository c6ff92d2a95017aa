import { DONE } from '../contracts.ts';
import { pausedEdges } from './pause.ts';
import type { StepDefinition, WorkflowDefinition } from './schema.ts';

/**
 * Mermaid ids must not start with a digit or contain dashes; step names can do both. Step names
 * have no underscores (see `StepName`), so this mapping cannot merge two steps.
 */
function nodeId(step: string): string {
  return `s_${step.replaceAll('-', '_')}`;
}

function label(step: StepDefinition, isFallback: boolean): string {
  const kind = step.kind === 'llm' ? 'LLM' : `code: ${step.handler}`;
  return `${step.name} (${kind})${isFallback ? ' [fallback]' : ''}`;
}

/**
 * Render a workflow as a Mermaid `stateDiagram-v2`: one state per step labelled with its kind
 * (LLM or code handler), one arrow per declared edge, `DONE` as `[*]`, and the fallback marked
 * (label, style and a note: undeclared routes and caught errors go there). The output depends
 * only on the definition (steps in file order, edges in declared order), so it can be asserted
 * on and committed to docs.
 *
 * @example
 * workflowToMermaid(loadWorkflow('support-desk'))
 * // stateDiagram-v2
 * //     state "01-extract-serial (LLM)" as s_01_extract_serial
 * //     ...
 * //     [*] --> s_01_extract_serial
 * //     s_01_understand --> s_02_look_up
 */
export function workflowToMermaid(def: WorkflowDefinition): string {
  const { manifest, steps } = def;
  const fallback = manifest.fallback;
  const lines = ['stateDiagram-v2'];
  for (const step of steps) lines.push(`    state "${label(step, step.name === fallback)}" as ${nodeId(step.name)}`);
  lines.push(`    [*] --> ${nodeId(manifest.entry)}`);
  for (const step of steps) {
    const paused = pausedEdges(step);
    for (const next of step.next) lines.push(`    ${nodeId(step.name)} --> ${next === DONE ? '[*]' : nodeId(next)}${paused.includes(next) ? ' : after checkpoint' : ''}`);
    if (step.pause) lines.push(`    ${nodeId(step.name)} --> ${nodeId(step.pause.onTimeout)} : checkpoint timeout`);
  }
  lines.push(`    note right of ${nodeId(fallback)} : fallback - undeclared routes and caught errors`);
  lines.push('    classDef llm fill:#e8f0fe,stroke:#1a73e8');
  lines.push('    classDef code fill:#e6f4ea,stroke:#188038');
  lines.push('    classDef fallback fill:#fce8e6,stroke:#d93025,stroke-width:3px');
  const ids = (kind: 'llm' | 'code') =>
    steps.filter((s) => s.kind === kind && s.name !== fallback).map((s) => nodeId(s.name));
  for (const kind of ['llm', 'code'] as const) {
    const members = ids(kind);
    if (members.length) lines.push(`    class ${members.join(',')} ${kind}`);
  }
  lines.push(`    class ${nodeId(fallback)} fallback`);
  return lines.join('\n') + '\n';
}
