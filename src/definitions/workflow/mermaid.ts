import { consensusPlan } from './consensus.ts';
import { eventLabel, eventTimeoutLabel } from './constructs/event.ts';
import { failureEdges, innerEntries, isConstruct, workflowScopes } from './constructs/scopes.ts';
import { pausedEdges } from './pause.ts';
import type { StepDefinition, WorkflowDefinition } from './schema.ts';
import { DONE } from './schema.ts';

/**
 * Mermaid ids must not start with a digit or contain dashes; step names can do both. Step names
 * have no underscores (see `StepName`), so this mapping cannot merge two steps.
 */
function nodeId(step: string): string {
  return `s_${step.replaceAll('-', '_')}`;
}

/** What a construct step does, in its label: `map: each data.attachments, 4 at once`. */
function constructKind(step: StepDefinition): string {
  if (step.map) return `map: each ${step.map.items}, ${step.map.maxConcurrency} at once`;
  if (step.parallel) return `parallel: ${Object.keys(step.parallel.branches).join(' + ')}`;
  if (step.workflow) return `workflow: ${step.workflow.name}`;
  if (step.event) return eventLabel(step.event);
  return step.wait?.until ? `wait until ${step.wait.until}` : `wait ${step.wait?.seconds}s`;
}

function label(step: StepDefinition, isFallback: boolean): string {
  const kind = isConstruct(step)
    ? constructKind(step)
    : step.kind === 'llm'
      ? step.consensus
        ? 'LLM, consensus vote'
        : 'LLM'
      : `code: ${step.handler}`;
  return `${step.name} (${kind})${isFallback ? ' [fallback]' : ''}`;
}

/** A consensus step's Map states (`m_` ids: step ids start with `s_`), in wave order. */
function waves(step: StepDefinition): { id: string; label: string }[] {
  if (!step.consensus) return [];
  const range = (ts: number[]) =>
    Math.min(...ts) === Math.max(...ts) ? `${ts[0]}` : `${Math.min(...ts)}-${Math.max(...ts)}`;
  return consensusPlan(step.consensus).map((items, i) => ({
    id: `m_${step.name.replaceAll('-', '_')}_${i + 1}`,
    label: `${step.name}.wave-${i + 1} (Map: ${items.length} samples, temperature ${range(items.map((s) => s.temperature))})`,
  }));
}

/** The counters capped on entering a step (`increment` steps). */
const cappedAt = (def: WorkflowDefinition, step: string) =>
  Object.entries(def.manifest.counters).filter(([, c]) => c.increment.includes(step) && !c.reset.includes(step));

/** Where an arrow into a step points past its counter check: its first Map state when it is sampled. */
const sampledEntryId = (step: StepDefinition) => waves(step)[0]?.id ?? nodeId(step.name);
/** Where an arrow into a step points: the counter check (a choice, `c_` ids) when entering it is capped. */
const entryId = (def: WorkflowDefinition, step: StepDefinition) =>
  cappedAt(def, step.name).length ? `c_${step.name.replaceAll('-', '_')}` : sampledEntryId(step);

/** Map states and the vote of consensus steps, counter outcomes and notes (nothing when the workflow uses neither). */
function consensusAndCounterLines(def: WorkflowDefinition): { states: string[]; edges: string[]; notes: string[] } {
  const states: string[] = [];
  const edges: string[] = [];
  const notes: string[] = [];
  for (const step of def.steps) {
    const maps = waves(step);
    maps.forEach((map, i) => {
      states.push(`    state "${map.label}" as ${map.id}`);
      const last = i === maps.length - 1;
      edges.push(`    ${map.id} --> ${nodeId(step.name)} : ${last ? 'vote' : 'vote (leader certain)'}`);
      if (!last) edges.push(`    ${map.id} --> ${maps[i + 1]!.id} : undecided`);
    });
    if (maps.length)
      notes.push(
        `    note left of ${nodeId(step.name)} : majority of ${step.consensus!.samples} samples, ties to the coldest sample${step.consensus!.vote ? `, votes on ${step.consensus!.vote}` : ''}`,
      );
  }
  for (const [name, counter] of Object.entries(def.manifest.counters)) {
    const outcome = `o_${counter.outcome}`;
    states.push(`    state "${counter.outcome} (${name} reached ${counter.max})" as ${outcome}`);
    edges.push(counter.then ? `    ${outcome} --> ${nodeId(counter.then)} : answers` : `    ${outcome} --> [*]`);
    for (const stepName of counter.increment)
      notes.push(
        `    note right of ${nodeId(stepName)} : ${name} +1 on entry${counter.reset.length ? `, reset by ${counter.reset.join(', ')}` : ''}`,
      );
  }
  for (const step of def.steps) {
    const capped = cappedAt(def, step.name);
    if (!capped.length) continue;
    const choice = entryId(def, step);
    states.push(`    state ${choice} <<choice>>`);
    edges.push(
      `    ${choice} --> ${sampledEntryId(step)} : ${capped.map(([name, c]) => `${name} < ${c.max}`).join(', ')}`,
    );
    for (const [name, c] of capped) edges.push(`    ${choice} --> o_${c.outcome} : ${name} = ${c.max}`);
  }
  return { states, edges, notes };
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
  const extra = consensusAndCounterLines(def);
  const entry = (name: string) => entryId(def, steps.find((s) => s.name === name)!);
  for (const step of steps) lines.push(`    state "${label(step, step.name === fallback)}" as ${nodeId(step.name)}`);
  lines.push(...extra.states);
  lines.push(`    [*] --> ${entry(manifest.entry)}`);
  // Inside items or a branch, DONE ends the item or branch: the arrow goes back to the step that joins them.
  const { scopeOf } = workflowScopes(def);
  const end = (step: StepDefinition) => {
    const owner = scopeOf.get(step.name)?.owner;
    return owner ? `${nodeId(owner.name)} : ${owner.kind === 'map' ? 'item done' : 'branch done'}` : '[*]';
  };
  for (const step of steps) {
    for (const inner of innerEntries(step))
      lines.push(
        `    ${nodeId(step.name)} --> ${entry(inner.entry)} : ${step.map ? 'each item' : `branch ${inner.name}`}`,
      );
    for (const to of failureEdges(step))
      lines.push(
        `    ${nodeId(step.name)} --> ${entry(to)} : ${step.event ? eventTimeoutLabel(step.event) : 'failed'}`,
      );
    const paused = pausedEdges(step);
    // A `when` output makes the checkpoint conditional: the route is taken with or without it.
    const checkpoint = step.pause?.when === undefined ? 'after checkpoint' : `after checkpoint if ${step.pause.when}`;
    for (const next of step.next)
      lines.push(
        `    ${nodeId(step.name)} --> ${next === DONE ? end(step) : entry(next)}${paused.includes(next) ? ` : ${checkpoint}` : ''}`,
      );
    if (step.pause) lines.push(`    ${nodeId(step.name)} --> ${entry(step.pause.onTimeout)} : checkpoint timeout`);
  }
  lines.push(...extra.edges);
  lines.push(`    note right of ${nodeId(fallback)} : fallback - undeclared routes and caught errors`);
  lines.push(...extra.notes);
  lines.push('    classDef llm fill:#e8f0fe,stroke:#1a73e8');
  lines.push('    classDef code fill:#e6f4ea,stroke:#188038');
  lines.push('    classDef fallback fill:#fce8e6,stroke:#d93025,stroke-width:3px');
  if (steps.some(isConstruct)) lines.push('    classDef construct fill:#fef7e0,stroke:#f9ab00');
  const ids = (kind: 'llm' | 'code' | 'construct') =>
    steps
      .filter((s) => (kind === 'construct' ? isConstruct(s) : s.kind === kind) && s.name !== fallback)
      .map((s) => nodeId(s.name));
  for (const kind of ['llm', 'code', 'construct'] as const) {
    const members = ids(kind);
    if (members.length) lines.push(`    class ${members.join(',')} ${kind}`);
  }
  lines.push(`    class ${nodeId(fallback)} fallback`);
  return lines.join('\n') + '\n';
}
