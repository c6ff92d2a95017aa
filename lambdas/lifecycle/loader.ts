/**
 * Loads a lifecycle statechart (`statemachines/<lifecycle>/statechart.yaml`) and its agent configs
 * (`statemachines/<lifecycle>/agents/<agent>.json`), validates them and compiles the statechart
 * into a `LifecycleDefinition`. Every problem is a `DefinitionError` naming the file and the field.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { checkDefinition, parseDefinitionYaml, readDefinitionYaml, relPath } from '../lib/definition-file.ts';
import { DefinitionError } from '../lib/errors.ts';
import { STATEMACHINES_DIR } from '../lib/project.ts';
import { AgentConfigSchema, type AgentConfig, type Condition } from './conditions.ts';
import {
  LEAD_EVENT_TYPES,
  SYSTEM_EVENT_TYPES,
  StatechartFileSchema,
  isLeadEventType,
  type LeadEventType,
  type LifecycleDefinition,
  type ResolvedTransition,
  type StateNode,
  type StateNodeFile,
  type Transition,
  type TransitionSpecFile,
} from './schema.ts';

/** The lifecycle this project ships. */
export const LEAD_LIFECYCLE = 'lead-lifecycle';

function normalise(spec: TransitionSpecFile, file: string, field: string): Transition | null {
  if (spec === null) return null;
  if (typeof spec === 'string') return { kind: 'goto', target: spec, actions: [] };
  const forms = [spec.target !== undefined, spec.targetFromDetail !== undefined, spec.restart === true].filter(Boolean).length;
  if (forms > 1) throw new DefinitionError(file, field, 'give at most one of target, targetFromDetail, restart');
  if (spec.restart) {
    if (spec.actions.length) throw new DefinitionError(file, field, 'a restart takes the initial state\'s transition; it has no actions of its own');
    return { kind: 'restart' };
  }
  if (spec.target !== undefined) return { kind: 'goto', target: spec.target, actions: spec.actions };
  if (spec.targetFromDetail !== undefined) return { kind: 'fromDetail', field: spec.targetFromDetail, actions: spec.actions };
  if (!spec.actions.length) throw new DefinitionError(file, field, 'a transition without a target needs actions');
  return { kind: 'stay', actions: spec.actions };
}

function normaliseOn(on: Record<string, TransitionSpecFile> | undefined, file: string, field: string) {
  const out: Partial<Record<LeadEventType, Transition | null>> = {};
  for (const [event, spec] of Object.entries(on ?? {})) {
    if (!isLeadEventType(event))
      throw new DefinitionError(file, `${field}.${event}`, `unknown event "${event}" (known: ${LEAD_EVENT_TYPES.join(', ')})`);
    out[event] = normalise(spec, file, `${field}.${event}`);
  }
  return out;
}

/** Where a state is declared in the file, for error messages: `states.active.states.engaged`. */
function fieldOf(states: Record<string, StateNode>, name: string): string {
  const chain: string[] = [];
  for (let s: string | null = name; s; s = states[s]!.parent) chain.unshift(s);
  return chain.map((s) => `states.${s}`).join('.');
}

/** The leaf's own state first, then its parents outwards. */
function ancestry(states: Record<string, StateNode>, leaf: string): string[] {
  const chain: string[] = [];
  for (let s: string | null = leaf; s; s = states[s]!.parent) chain.push(s);
  return chain;
}

function resolveHandlers(def: Omit<LifecycleDefinition, 'handlers'>): LifecycleDefinition['handlers'] {
  const handlers: LifecycleDefinition['handlers'] = {};
  for (const leaf of def.leaves) {
    const table: Partial<Record<LeadEventType, ResolvedTransition>> = {};
    for (const event of LEAD_EVENT_TYPES) {
      // The deepest state that mentions the event decides, even with `null`; else the machine level.
      const declaredIn = ancestry(def.states, leaf).find((s) => def.states[s]!.on[event] !== undefined) ?? null;
      const t = declaredIn ? def.states[declaredIn]!.on[event] : def.on[event];
      if (!t) continue;
      // A goto to the leaf itself is no transition: nothing is exited or entered.
      if (t.kind === 'goto' && t.target === leaf) {
        if (t.actions.length) table[event] = { declaredIn, transition: { kind: 'stay', actions: t.actions } };
        continue;
      }
      table[event] = { declaredIn, transition: t };
    }
    handlers[leaf] = table;
  }
  return handlers;
}

function validate(def: LifecycleDefinition): void {
  const { file, states } = def;
  const where = (s: string | null) => (s ? `${fieldOf(states, s)}.on` : 'on');
  // Object.hasOwn: state names like `constructor` are valid and must not find Object.prototype.
  const isLeaf = (s: string) => Object.hasOwn(states, s) && states[s]!.children.length === 0;
  const initial = Object.hasOwn(states, def.initial) ? states[def.initial] : undefined;
  if (!initial) throw new DefinitionError(file, 'initial', `unknown state "${def.initial}"`);
  if (!isLeaf(def.initial)) throw new DefinitionError(file, 'initial', `"${def.initial}" is a parent state; the initial state must be a leaf`);
  if (initial.terminal) throw new DefinitionError(file, 'initial', 'the initial state cannot be terminal');
  if (initial.entry.length)
    throw new DefinitionError(file, `${fieldOf(states, def.initial)}.entry`, 'the initial state has no entry actions: a conversation starts from the initial context');

  const declarations: [string | null, Partial<Record<LeadEventType, Transition | null>>][] = [
    [null, def.on],
    ...Object.values(states).map((s): [string, StateNode['on']] => [s.name, s.on]),
  ];
  const declared = declarations.flatMap(([owner, on]) =>
    (Object.entries(on) as [LeadEventType, Transition | null][]).map(([event, t]) => ({ owner, event, t, field: `${where(owner)}.${event}` })),
  );
  for (const { t, field } of declared) {
    if (t?.kind !== 'goto') continue;
    if (!Object.hasOwn(states, t.target)) throw new DefinitionError(file, field, `unknown state "${t.target}"`);
    if (!isLeaf(t.target)) throw new DefinitionError(file, field, `"${t.target}" is a parent state; targets must be leaves`);
  }
  for (const { owner, event, t, field } of declared) {
    if (t?.kind !== 'restart') continue;
    if (!owner || !states[owner]!.terminal) throw new DefinitionError(file, field, 'only terminal states restart');
    const first = def.handlers[def.initial]![event]?.transition;
    if (first?.kind !== 'goto' || states[first.target]!.terminal)
      throw new DefinitionError(file, field, `a restart needs the initial state "${def.initial}" to handle ${event} with a target that is not terminal`);
  }
  // The transition function raises the system events in any non-terminal state: each must be
  // handled there, and goal.hit must end the conversation (so a goal is hit once per conversation).
  for (const leaf of def.leaves.filter((l) => !states[l]!.terminal)) {
    for (const event of SYSTEM_EVENT_TYPES) {
      const t = def.handlers[leaf]![event]?.transition;
      if (!t) throw new DefinitionError(file, fieldOf(states, leaf), `must handle ${event} (itself or through a parent): the lifecycle raises it in every non-terminal state`);
      if (event === 'goal.hit' && (t.kind !== 'goto' || !states[t.target]!.terminal))
        throw new DefinitionError(file, fieldOf(states, leaf), 'goal.hit must go to a terminal state');
    }
  }
}

/**
 * Parse and validate a statechart (no file access: tests pass YAML text).
 *
 * Checks: the schema; state names unique across the tree; parents have children and are not
 * terminal; every event is in the vocabulary; targets exist and are leaves; the initial state is
 * a non-terminal leaf without entry actions; restarts only in terminal states; the system events
 * are handled in every non-terminal leaf and `goal.hit` ends the conversation.
 *
 * @throws DefinitionError naming the file and the field.
 */
export function parseLifecycle(text: string, file: string): LifecycleDefinition {
  return lifecycleFrom(parseDefinitionYaml(text, file), file);
}

function lifecycleFrom(value: unknown, file: string): LifecycleDefinition {
  const chart = checkDefinition(StatechartFileSchema, value, file);
  const states: Record<string, StateNode> = {};
  const leaves: string[] = [];
  const visit = (name: string, node: StateNodeFile, parent: string | null) => {
    const field = parent ? `${fieldOf(states, parent)}.states.${name}` : `states.${name}`;
    if (Object.hasOwn(states, name)) throw new DefinitionError(file, field, `duplicate state name "${name}" (also at ${fieldOf(states, name)})`);
    const children = Object.keys(node.states ?? {});
    if (node.states && children.length === 0) throw new DefinitionError(file, `${field}.states`, 'a parent state needs at least one child');
    if (children.length && node.terminal) throw new DefinitionError(file, `${field}.terminal`, 'only leaves can be terminal');
    states[name] = {
      name,
      path: parent ? `${states[parent]!.path}.${name}` : name,
      parent,
      children,
      terminal: node.terminal ?? false,
      entry: node.entry ?? [],
      on: normaliseOn(node.on, file, `${field}.on`),
      ...(node.description && { description: node.description }),
    };
    if (!children.length) leaves.push(name);
    for (const child of children) visit(child, node.states![child]!, name);
  };
  for (const [name, node] of Object.entries(chart.states)) visit(name, node, null);
  const base = {
    name: chart.name,
    description: chart.description,
    version: chart.version,
    file,
    initial: chart.initial,
    on: normaliseOn(chart.on, file, 'on'),
    states,
    roots: Object.keys(chart.states),
    leaves,
  };
  const def: LifecycleDefinition = { ...base, handlers: resolveHandlers(base) };
  validate(def);
  return def;
}

const cache = new Map<string, LifecycleDefinition>();

/**
 * Load a lifecycle by name from `statemachines/<name>/statechart.yaml`, once per process.
 *
 * @example
 * const def = loadLifecycle(); // lead-lifecycle
 * def.handlers.cold['lead.message_sent']; // { declaredIn: 'cold', transition: { kind: 'goto', target: 'engaged', actions: [] } }
 */
export function loadLifecycle(name: string = LEAD_LIFECYCLE, root: string = STATEMACHINES_DIR): LifecycleDefinition {
  const path = join(root, name, 'statechart.yaml');
  const hit = cache.get(path);
  if (hit) return hit;
  if (!existsSync(path)) throw new DefinitionError(relPath(path), '(file)', `no statechart for lifecycle "${name}"`);
  const def = lifecycleFrom(readDefinitionYaml(path), relPath(path));
  if (def.name !== name) throw new DefinitionError(def.file, 'name', `must match the folder name "${name}"`);
  cache.set(path, def);
  return def;
}

/**
 * Validate an agent config from any source (a file, a table, an API body).
 *
 * @param source names the source in errors, e.g. the file path or `agent acme`.
 * @throws DefinitionError naming the source and the field.
 */
export function parseAgentConfig(value: unknown, source: string): AgentConfig {
  return checkDefinition(AgentConfigSchema, value, source);
}

function agentsDir(lifecycle: string, root: string): string {
  return join(root, lifecycle, 'agents');
}

/** Agent names (config file names without `.json`) of a lifecycle, sorted. */
export function listAgentConfigs(lifecycle: string = LEAD_LIFECYCLE, root: string = STATEMACHINES_DIR): string[] {
  const dir = agentsDir(lifecycle, root);
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .map((f) => f.slice(0, -'.json'.length))
    .sort();
}

/** Load `statemachines/<lifecycle>/agents/<agent>.json`. */
export function loadAgentConfig(agent: string, lifecycle: string = LEAD_LIFECYCLE, root: string = STATEMACHINES_DIR): AgentConfig {
  const path = join(agentsDir(lifecycle, root), `${agent}.json`);
  if (!existsSync(path)) {
    const known = listAgentConfigs(lifecycle, root);
    throw new DefinitionError(relPath(path), '(file)', `unknown agent "${agent}" (known: ${known.join(', ') || 'none'})`);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (e) {
    throw new DefinitionError(relPath(path), '(json)', (e as Error).message);
  }
  const config = parseAgentConfig(raw, relPath(path));
  checkConditionStates(config, loadLifecycle(lifecycle, root), relPath(path));
  return config;
}

/**
 * Every `state` a condition names is a state of the lifecycle (a typo would make the condition
 * silently never hold).
 * @throws DefinitionError naming the source and the condition.
 */
export function checkConditionStates(config: AgentConfig, def: LifecycleDefinition, source: string): void {
  const visit = (c: Condition, field: string): void => {
    if ('anyOf' in c) return c.anyOf.forEach((m, i) => visit(m, `${field}.anyOf.${i}`));
    if ('allOf' in c) return c.allOf.forEach((m, i) => visit(m, `${field}.allOf.${i}`));
    if (c.state !== undefined && !Object.hasOwn(def.states, c.state))
      throw new DefinitionError(source, `${field}.state`, `"${c.state}" is not a state of ${def.name}`);
  };
  if (config.goal) visit(config.goal, 'goal');
  config.stopFollowUpsOn.forEach((c, i) => visit(c, `stopFollowUpsOn.${i}`));
  (config.stopConversationOn ?? []).forEach((c, i) => visit(c, `stopConversationOn.${i}`));
}
