/**
 * The statechart as an XState v5 machine config (plain JSON), for Stately's editor ("Import from
 * code") and for XState's pure `transition()`. Pure: `stepwise lifecycle <name> export --xstate` prints it, and a
 * differential test runs random event sequences through it and through `applyEvent`.
 *
 * Mapping:
 * - every state gets `id: <name>` (names are unique across the tree), targets are `#<name>`;
 *   compound states get `initial` = their first child (never used: transitions target leaves);
 * - `event: target` → `{ target }`; `{ actions }` → a targetless transition; `event: null` → `{}`
 *   (a targetless transition without actions: it is selected, so the parents are not consulted);
 * - a placement (`targetFromDetail`) → one transition per leaf, guarded by
 *   `{ type: 'detailEquals', params: { field, value: <leaf> } }`;
 * - terminal states carry the tag `terminal` (not `type: 'final'`, which would stop the actor);
 * their restarts and a placement (`targetFromDetail`) moving an entity out of them run `startConversation` first, which
 * resets
 *   the context (the next conversation starts fresh);
 * - where a parent's transition would target the leaf itself, the leaf gets `{}`: here that is no
 *   transition, while XState would exit and re-enter the leaf;
 * - delayed transitions → `after`: a duration as its milliseconds (`14d` → `1209600000`), a
 *   `detail.<field>` delay as a named delay of that name (the caller's `setup({ delays })` reads it
 *   from the entering event).
 *
 * Deliberate differences (the lead lifecycle example's README documents them):
 * - Echo: a placement naming the entity's current leaf is no transition here; XState
 *   re-enters that leaf (running its entry actions, e.g. `clearFollowUpStop` on `engaged`).
 * - Conversations: the conversation number, condition progress, goals and stops raised from the
 *   agent config, and the version guards (`expectedVersion`, versioned placements) live outside the
 *   chart; the export knows the chart only. Raised events are ordinary events for XState.
 */
import {
  type ContextAction,
  type DelayedTransition,
  handlerOf,
  type LifecycleDefinition,
  type StateNode,
  type Transition,
} from './schema.ts';

/** The actions the export names; implementations are the caller's (`setup({ actions })`). */
export const XSTATE_ACTIONS = ['clearFollowUpStop', 'stopFollowUps', 'startConversation'] as const;
/** The guard of `targetFromDetail` transitions: `event.detail[params.field] === params.value`. */
export const DETAIL_EQUALS_GUARD = 'detailEquals';
/** The tag of terminal states. */
export const TERMINAL_TAG = 'terminal';

export interface XStateTransitionConfig {
  target?: string;
  actions?: { type: string }[];
  guard?: { type: string; params: { field: string; value: string } };
  description?: string;
}

export interface XStateNodeConfig {
  id: string;
  description?: string;
  initial?: string;
  tags?: string[];
  entry?: { type: string }[];
  on?: Record<string, XStateTransitionConfig | XStateTransitionConfig[]>;
  after?: Record<string, XStateTransitionConfig>;
  states?: Record<string, XStateNodeConfig>;
}

export interface XStateMachineConfig extends XStateNodeConfig {
  context: { followUpsStopped?: boolean };
  version: string;
}

const actionsOf = (names: readonly (ContextAction | 'startConversation')[]) =>
  names.length ? { actions: names.map((type) => ({ type })) } : {};

/**
 * The XState v5 machine config of a lifecycle.
 * @example
 * const config = toXStateConfig(loadLifecycle('order-lifecycle'));
 * const machine = setup({ actions, guards }).createMachine(config); // xstate
 */
export function toXStateConfig(def: LifecycleDefinition): XStateMachineConfig {
  const isTerminal = (s: string) => def.states[s]!.terminal;
  const fromDetail = (
    source: string | null,
    t: Extract<Transition, { kind: 'fromDetail' }>,
  ): XStateTransitionConfig[] =>
    def.leaves.map((leaf) => {
      const restart = source !== null && isTerminal(source) && !isTerminal(leaf);
      return {
        target: `#${leaf}`,
        guard: { type: DETAIL_EQUALS_GUARD, params: { field: t.field, value: leaf } },
        ...actionsOf([...(restart ? ['startConversation' as const] : []), ...t.actions]),
      };
    });
  const convert = (source: string | null, t: Transition | null): XStateTransitionConfig | XStateTransitionConfig[] => {
    if (t === null) return { description: 'only logged here' };
    switch (t.kind) {
      case 'goto': {
        const restart = source !== null && isTerminal(source) && !isTerminal(t.target);
        return {
          target: `#${t.target}`,
          ...actionsOf([...(restart ? ['startConversation' as const] : []), ...t.actions]),
        };
      }
      case 'stay':
        return actionsOf(t.actions);
      case 'restart': {
        const first = handlerOf(def, def.initial, eventOfRestart(def, source!, t))!.transition as Extract<
          Transition,
          { kind: 'goto' }
        >;
        return { target: `#${first.target}`, ...actionsOf(['startConversation', ...first.actions]) };
      }
      case 'fromDetail':
        return fromDetail(source, t);
    }
  };
  const onOf = (source: string | null, on: StateNode['on']) => {
    const out: Record<string, XStateTransitionConfig | XStateTransitionConfig[]> = {};
    for (const [event, t] of Object.entries(on)) out[event] = convert(source, t);
    return out;
  };
  const node = (name: string): XStateNodeConfig => {
    const s = def.states[name]!;
    const on = onOf(name, s.on);
    if (!s.children.length) {
      for (const [event, resolved] of Object.entries(def.handlers[name]!)) {
        // A terminal leaf leaving through the machine-level placement starts the next conversation.
        if (resolved.transition.kind === 'fromDetail' && s.terminal && !on[event])
          on[event] = fromDetail(name, resolved.transition);
      }
      for (const event of selfTargets(def, name))
        on[event] ??= { description: 'a transition to the current leaf is no transition' };
    }
    return {
      id: name,
      ...(s.description && { description: s.description }),
      ...(s.children.length && { initial: s.children[0] }),
      ...(s.terminal && { tags: [TERMINAL_TAG] }),
      ...(s.entry.length && { entry: s.entry.map((type) => ({ type })) }),
      ...(Object.keys(on).length && { on }),
      ...(s.after.length && { after: afterOf(s, (t) => convert(name, t) as XStateTransitionConfig) }),
      ...(s.children.length && { states: Object.fromEntries(s.children.map((c) => [c, node(c)])) }),
    };
  };
  return {
    id: def.name,
    description: def.description,
    version: def.version,
    initial: def.initial,
    context: def.features.followUps ? { followUpsStopped: false } : {},
    on: onOf(null, def.on),
    states: Object.fromEntries(def.roots.map((r) => [r, node(r)])),
  };
}

/** A state's delayed transitions as XState `after`: a duration in milliseconds, a detail delay as the named delay `detail.<field>`. */
function afterOf(
  s: StateNode,
  convert: (t: DelayedTransition['transition']) => XStateTransitionConfig,
): Record<string, XStateTransitionConfig> {
  return Object.fromEntries(s.after.map((d) => ['ms' in d.delay ? String(d.delay.ms) : d.key, convert(d.transition)]));
}

/** The event a `restart` declaration belongs to (the key it is declared under). */
function eventOfRestart(def: LifecycleDefinition, source: string, t: Transition): string {
  const entry = Object.entries(def.states[source]!.on).find(([, v]) => v === t);
  return entry![0];
}

/** Events for which a parent (or the machine level, not `fromDetail`) declares a goto to `leaf` itself and the leaf does not override it. */
function selfTargets(def: LifecycleDefinition, leaf: string): string[] {
  const events: string[] = [];
  for (let s = def.states[leaf]!.parent; s; s = def.states[s]!.parent) {
    for (const [event, t] of Object.entries(def.states[s]!.on)) {
      if (t?.kind !== 'goto' || t.target !== leaf) continue;
      // Only when this declaration is the one the leaf resolves to (no deeper state mentions the event).
      const deeper = ancestorsBelow(def, leaf, s).some((a) => Object.hasOwn(def.states[a]!.on, event));
      if (!deeper) events.push(event);
    }
  }
  for (const [event, t] of Object.entries(def.on)) {
    if (
      t?.kind === 'goto' &&
      t.target === leaf &&
      !ancestorsBelow(def, leaf, null).some((a) => Object.hasOwn(def.states[a]!.on, event))
    )
      events.push(event);
  }
  return events;
}

/** The leaf and its ancestors strictly below `top` (`null`: all of them). */
function ancestorsBelow(def: LifecycleDefinition, leaf: string, top: string | null): string[] {
  const out: string[] = [];
  for (let s: string | null = leaf; s && s !== top; s = def.states[s]!.parent) out.push(s);
  return out;
}
