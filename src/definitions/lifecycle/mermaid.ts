import type { LifecycleDefinition, StateNode, Transition } from './schema.ts';

const INDENT = '    ';

function label(event: string, actions: readonly string[]): string {
  return actions.length ? `${event} / ${actions.join(', ')}` : event;
}

function declareState(def: LifecycleDefinition, node: StateNode, depth: number, lines: string[]): void {
  const pad = INDENT.repeat(depth);
  if (node.children.length) {
    lines.push(`${pad}state ${node.name} {`);
    for (const child of node.children) declareState(def, def.states[child]!, depth + 1, lines);
    lines.push(`${pad}}`);
  } else {
    lines.push(node.entry.length ? `${pad}${node.name} : entry / ${node.entry.join(', ')}` : `${pad}${node.name}`);
  }
}

/** Where a transition leads, as text (`null` source: the machine level). */
function targetOf(def: LifecycleDefinition, from: string | null, t: Transition): string {
  switch (t.kind) {
    case 'goto':
      return t.target;
    case 'stay':
      return from ?? 'the same state';
    case 'restart':
      return def.initial;
    case 'fromDetail':
      return `the leaf named by detail.${t.field}`;
  }
}

/** The arrow for a declared transition, or a `%%` comment when it has no drawable source or target. */
function edge(def: LifecycleDefinition, from: string | null, event: string, t: Transition | null): string {
  const source = from ?? 'every state';
  if (t === null) return `%% ${source}: ${event} is only logged here, whatever its parents do`;
  const text = label(event, t.kind === 'restart' ? ['startConversation'] : t.actions);
  const to = targetOf(def, from, t);
  return from === null || t.kind === 'fromDetail' ? `%% ${source}: ${text} --> ${to}` : `${from} --> ${to} : ${text}`;
}

/**
 * Render a lifecycle as a Mermaid `stateDiagram-v2`: parents as composite states
 * (`state active { ... }`), entry actions on their state, one arrow per declared transition from
 * the state that declares it (a parent's arrow applies to all its children), labelled
 * `event / actions`; delayed transitions are arrows labelled `after 14d` from the state declaring
 * them; restarts point at the initial state; terminal states lead to `[*]`.
 * Transitions without a drawable source or target (machine level, `targetFromDetail`, `null`)
 * become `%%` comments. States and transitions come out in document order, so the output depends
 * only on the definition and can be asserted on and committed to docs.
 *
 * @example
 * lifecycleToMermaid(loadLifecycle('order-lifecycle'))
 * // stateDiagram-v2
 * //     [*] --> idle
 * //     idle
 * //     state active {
 * //     ...
 * //     idle --> outreach : agent.message_sent
 */
export function lifecycleToMermaid(def: LifecycleDefinition): string {
  const lines = ['stateDiagram-v2', `${INDENT}[*] --> ${def.initial}`];
  for (const root of def.roots) declareState(def, def.states[root]!, 1, lines);
  const declared: [string | null, StateNode['on']][] = [
    [null, def.on],
    ...Object.values(def.states).map((s): [string, StateNode['on']] => [s.name, s.on]),
  ];
  for (const [from, on] of declared) {
    for (const [event, t] of Object.entries(on)) lines.push(INDENT + edge(def, from, event, t));
  }
  for (const s of Object.values(def.states))
    for (const d of s.after)
      lines.push(`${INDENT}${s.name} --> ${d.transition.target} : ${label(`after ${d.key}`, d.transition.actions)}`);
  for (const leaf of def.leaves.filter((l) => def.states[l]!.terminal)) lines.push(`${INDENT}${leaf} --> [*]`);
  return lines.join('\n') + '\n';
}
