/**
 * Loads a lifecycle statechart (`statemachines/<lifecycle>/statechart.yaml`) and its agent configs
 * (`statemachines/<lifecycle>/agents/<agent>.json`), validates them and compiles the statechart
 * into a `LifecycleDefinition`. Every problem is a `DefinitionError` naming the file and the field.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DefinitionError } from '../../core/errors.ts';
import { STATEMACHINES_DIR } from '../../core/paths.ts';
import { checkDefinition, parseDefinitionYaml, readDefinitionYaml, relPath } from '../definition-file.ts';
import { type AgentConfig, AgentConfigSchema, type Condition } from './agent-config.ts';
import { AFTER_PREFIX, afterEventType, durationMs } from './delays.ts';
import {
  type AfterSpecFile,
  CONVERSATION_STOPPED,
  type DelayedTransition,
  FOLLOW_UP_STOPPED,
  GOAL_HIT,
  handlerOf,
  type LifecycleDefinition,
  REPLAY_SOURCE,
  type ResolvedTransition,
  SCHEDULER_SOURCE,
  type StatechartFile,
  StatechartFileSchema,
  type StateNode,
  type StateNodeFile,
  type Transition,
  type TransitionSpecFile,
} from './schema.ts';

function normalise(spec: TransitionSpecFile, file: string, field: string): Transition | null {
  if (spec === null) return null;
  if (typeof spec === 'string') return { kind: 'goto', target: spec, actions: [] };
  const forms = [spec.target !== undefined, spec.targetFromDetail !== undefined, spec.restart === true].filter(
    Boolean,
  ).length;
  if (forms > 1) throw new DefinitionError(file, field, 'give at most one of target, targetFromDetail, restart');
  if ((spec.versionFrom !== undefined || spec.timeFrom !== undefined) && spec.targetFromDetail === undefined)
    throw new DefinitionError(file, field, 'versionFrom and timeFrom belong beside targetFromDetail');
  if (spec.restart) {
    if (spec.actions.length)
      throw new DefinitionError(
        file,
        field,
        "a restart takes the initial state's transition; it has no actions of its own",
      );
    return { kind: 'restart' };
  }
  if (spec.target !== undefined) return { kind: 'goto', target: spec.target, actions: spec.actions };
  if (spec.targetFromDetail !== undefined)
    return {
      kind: 'fromDetail',
      field: spec.targetFromDetail,
      actions: spec.actions,
      ...(spec.versionFrom !== undefined && { versionFrom: spec.versionFrom }),
      ...(spec.timeFrom !== undefined && { timeFrom: spec.timeFrom }),
    };
  if (!spec.actions.length) throw new DefinitionError(file, field, 'a transition without a target needs actions');
  return { kind: 'stay', actions: spec.actions };
}

/** Declared transitions by event type; with a declared vocabulary, every event must be in it. */
function normaliseOn(
  on: Record<string, TransitionSpecFile> | undefined,
  file: string,
  field: string,
  vocabulary: readonly string[] | undefined,
) {
  const out: Record<string, Transition | null> = {};
  for (const [event, spec] of Object.entries(on ?? {})) {
    if (vocabulary && !vocabulary.includes(event))
      throw new DefinitionError(
        file,
        `${field}.${event}`,
        `unknown event "${event}" (known: ${vocabulary.join(', ')})`,
      );
    out[event] = normalise(spec, file, `${field}.${event}`);
  }
  return out;
}

/** ASL state names (a delayed transition's Task is named by its event type) are at most 80 characters. */
const MAX_TASK_NAME = 80;

/** A state's delayed transitions, in document order; each applies its own event `after.<state>.<delay>`. */
function normaliseAfter(
  state: string,
  after: Record<string, AfterSpecFile> | undefined,
  file: string,
  field: string,
): DelayedTransition[] {
  return Object.entries(after ?? {}).map(([key, spec]) => {
    const type = afterEventType(state, key);
    if (type.length > MAX_TASK_NAME)
      throw new DefinitionError(file, `${field}.${key}`, `"${type}" is over ${MAX_TASK_NAME} characters`);
    const { target, actions } = typeof spec === 'string' ? { target: spec, actions: [] } : spec;
    const duration = durationMs(key);
    return {
      key,
      type,
      delay: duration === undefined ? { field: key.slice('detail.'.length) } : { ms: duration },
      transition: { kind: 'goto', target, actions },
    };
  });
}

/** A state's own transitions: the declared ones and its delayed transitions under their event types. */
function ownTransitions(node: StateNode): Record<string, Transition | null> {
  return { ...node.on, ...Object.fromEntries(node.after.map((d) => [d.type, d.transition])) };
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
    const table: Record<string, ResolvedTransition> = {};
    for (const event of def.events) {
      // The deepest state that mentions the event decides, even with `null`; else the machine level.
      const declaredIn =
        ancestry(def.states, leaf).find((s) => Object.hasOwn(ownTransitions(def.states[s]!), event)) ?? null;
      const on = declaredIn ? ownTransitions(def.states[declaredIn]!) : def.on;
      const t = Object.hasOwn(on, event) ? on[event] : undefined;
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

/** The events a feature applies or raises itself: part of the vocabulary whenever the feature is on. */
function featureEvents({ features }: StatechartFile): string[] {
  return [
    ...(features.goals ? [GOAL_HIT, CONVERSATION_STOPPED] : []),
    ...(features.followUps
      ? [FOLLOW_UP_STOPPED, features.followUps.sent, features.followUps.reply, features.followUps.exhausted]
      : []),
    ...(features.renewals ? [features.renewals.event] : []),
  ];
}

/**
 * The declared vocabulary, or every event the transitions and features name, in order of appearance;
 * then, either way, the events of the delayed transitions (their timers apply them).
 */
function vocabularyOf(chart: StatechartFile, states: Record<string, StateNode>): string[] {
  const delayed = Object.values(states).flatMap((s) => s.after.map((d) => d.type));
  if (chart.events) return [...new Set([...chart.events, ...delayed])];
  const seen = new Set<string>();
  const visit = (node: { on?: Record<string, unknown>; states?: Record<string, StateNodeFile> }) => {
    for (const event of Object.keys(node.on ?? {})) seen.add(event);
    for (const child of Object.values(node.states ?? {})) visit(child);
  };
  visit(chart);
  for (const event of featureEvents(chart)) seen.add(event);
  return [...seen, ...delayed];
}

/** Every declared transition (machine level, per state, delayed) with the state declaring it and its field in the file. */
function declaredTransitions(def: LifecycleDefinition) {
  const { states } = def;
  const where = (s: string | null) => (s ? `${fieldOf(states, s)}.on` : 'on');
  const declarations: [string | null, Record<string, Transition | null>][] = [
    [null, def.on],
    ...Object.values(states).map((s): [string, StateNode['on']] => [s.name, s.on]),
  ];
  return [
    ...declarations.flatMap(([owner, on]) =>
      Object.entries(on).map(([event, t]) => ({ owner, event, t, field: `${where(owner)}.${event}` })),
    ),
    ...Object.values(states).flatMap((s) =>
      s.after.map((d) => ({
        owner: s.name as string | null,
        event: d.type,
        t: d.transition as Transition | null,
        field: `${fieldOf(states, s.name)}.after.${d.key}`,
      })),
    ),
  ];
}

function validate(def: LifecycleDefinition, chart: StatechartFile): void {
  const { file, states, features } = def;
  // Object.hasOwn: state names like `constructor` are valid and must not find Object.prototype.
  const isLeaf = (s: string) => Object.hasOwn(states, s) && states[s]!.children.length === 0;
  const initial = Object.hasOwn(states, def.initial) ? states[def.initial] : undefined;
  if (!initial) throw new DefinitionError(file, 'initial', `unknown state "${def.initial}"`);
  if (!isLeaf(def.initial))
    throw new DefinitionError(file, 'initial', `"${def.initial}" is a parent state; the initial state must be a leaf`);
  if (initial.terminal) throw new DefinitionError(file, 'initial', 'the initial state cannot be terminal');
  if (initial.entry.length)
    throw new DefinitionError(
      file,
      `${fieldOf(states, def.initial)}.entry`,
      'the initial state has no entry actions: a conversation starts from the initial context',
    );

  const declared = declaredTransitions(def);
  for (const { t, field } of declared) {
    if (t?.kind !== 'goto') continue;
    if (!Object.hasOwn(states, t.target)) throw new DefinitionError(file, field, `unknown state "${t.target}"`);
    if (!isLeaf(t.target))
      throw new DefinitionError(file, field, `"${t.target}" is a parent state; targets must be leaves`);
  }
  for (const { owner, event, t, field } of declared) {
    if (t?.kind !== 'restart') continue;
    if (!owner || !states[owner]!.terminal) throw new DefinitionError(file, field, 'only terminal states restart');
    const first = handlerOf(def, def.initial, event)?.transition;
    if (first?.kind !== 'goto' || states[first.target]!.terminal)
      throw new DefinitionError(
        file,
        field,
        `a restart needs the initial state "${def.initial}" to handle ${event} with a target that is not terminal`,
      );
  }
  // Context actions set `followUpsStopped`, which only the follow-ups feature has.
  if (!features.followUps) {
    const withActions = declared.find(({ t }) => t && t.kind !== 'restart' && t.actions.length);
    if (withActions)
      throw new DefinitionError(
        file,
        withActions.field,
        'context actions need the followUps feature (features.followUps)',
      );
    const withEntry = Object.values(states).find((s) => s.entry.length);
    if (withEntry)
      throw new DefinitionError(
        file,
        `${fieldOf(states, withEntry.name)}.entry`,
        'context actions need the followUps feature (features.followUps)',
      );
  }
  // The transition function raises the system events in any non-terminal state: each must be
  // handled there, and goal.hit must end the conversation (so a goal is hit once per conversation).
  const raised = [...(features.followUps ? [FOLLOW_UP_STOPPED] : []), ...(features.goals ? [GOAL_HIT] : [])];
  for (const leaf of def.leaves.filter((l) => !states[l]!.terminal)) {
    for (const event of raised) {
      const t = handlerOf(def, leaf, event)?.transition;
      if (!t)
        throw new DefinitionError(
          file,
          fieldOf(states, leaf),
          `must handle ${event} (itself or through a parent): the lifecycle raises it in every non-terminal state`,
        );
      if (event === GOAL_HIT && (t.kind !== 'goto' || !states[t.target]!.terminal))
        throw new DefinitionError(file, fieldOf(states, leaf), `${GOAL_HIT} must go to a terminal state`);
    }
  }
  validateDelays(def, chart);
  validateNames(def, chart, isLeaf);
}

/**
 * Delayed transitions start their timer on entering their state, so the initial state and its
 * parents can have none (an entity is there before any change); a leaf's delay cannot target the
 * leaf itself (that is no transition); `after.` event types are theirs alone.
 */
function validateDelays(def: LifecycleDefinition, chart: StatechartFile): void {
  const { file, states } = def;
  for (let s: string | null = def.initial; s; s = states[s]!.parent)
    if (states[s]!.after.length)
      throw new DefinitionError(
        file,
        `${fieldOf(states, s)}.after`,
        `"${s}" holds the initial state: an entity is there before any event, so nothing would start the timer`,
      );
  for (const s of Object.values(states))
    for (const d of s.after)
      if (d.transition.target === s.name)
        throw new DefinitionError(
          file,
          `${fieldOf(states, s.name)}.after.${d.key}`,
          'a delayed transition to the state itself would do nothing',
        );
  const declared = [
    ...(chart.events ?? []).map((e, i) => ({ e, field: `events.${i}` })),
    ...Object.keys(def.on).map((e) => ({ e, field: `on.${e}` })),
    ...Object.values(states).flatMap((s) =>
      Object.keys(s.on).map((e) => ({ e, field: `${fieldOf(states, s.name)}.on.${e}` })),
    ),
  ];
  const taken = declared.find(({ e }) => e.startsWith(AFTER_PREFIX));
  if (taken)
    throw new DefinitionError(
      file,
      taken.field,
      `"${taken.e}": event types starting "${AFTER_PREFIX}" are the delayed transitions' own (declare them with after)`,
    );
}

/** Every state and event a feature or report names exists (a typo would silently never match). */
function validateNames(def: LifecycleDefinition, chart: StatechartFile, isLeaf: (s: string) => boolean): void {
  const { file, features } = def;
  const leaf = (name: string, field: string) => {
    if (!isLeaf(name))
      throw new DefinitionError(
        file,
        field,
        Object.hasOwn(def.states, name) ? `"${name}" is a parent state; name a leaf` : `unknown state "${name}"`,
      );
  };
  const state = (name: string, field: string) => {
    if (!Object.hasOwn(def.states, name)) throw new DefinitionError(file, field, `unknown state "${name}"`);
  };
  const event = (name: string, field: string) => {
    if (!def.events.includes(name))
      throw new DefinitionError(file, field, `unknown event "${name}" (known: ${def.events.join(', ')})`);
  };
  features.followUps?.states.forEach((s, i) => leaf(s, `features.followUps.states.${i}`));
  for (const key of ['sent', 'reply', 'exhausted'] as const)
    if (features.followUps) event(features.followUps[key], `features.followUps.${key}`);
  if (features.renewals) {
    leaf(features.renewals.state, 'features.renewals.state');
    event(features.renewals.event, 'features.renewals.event');
  }
  features.notify?.states.forEach((s, i) => leaf(s, `features.notify.states.${i}`));
  if (chart.events)
    for (const e of featureEvents(chart))
      if (!def.events.includes(e)) throw new DefinitionError(file, 'events', `"${e}" is missing: a feature uses it`);
  for (const [key, report] of Object.entries(def.reports)) {
    for (const field of ['count', 'rate', 'of', 'from', 'to', 'event'] as const)
      if (report[field] !== undefined) event(report[field], `reports.${key}.${field}`);
    if (report.in !== undefined) state(report.in, `reports.${key}.in`);
  }
}

/** `orderId` → `order`; a key without the `Id` suffix names nothing: `entity`. */
function entityName(key: string): string {
  const m = /^([a-z][a-z0-9_]*)Id$/.exec(key);
  return m ? m[1]! : 'entity';
}

/** English plural of a lowercase noun, for labels: `order` → `orders`, `entity` → `entities`, `box` → `boxes`. */
function plural(noun: string): string {
  if (/[^aeiou]y$/.test(noun)) return `${noun.slice(0, -1)}ies`;
  return /(s|x|z|ch|sh)$/.test(noun) ? `${noun}es` : `${noun}s`;
}

/**
 * Parse and validate a statechart (no file access: tests pass YAML text).
 *
 * Checks: the schema; state names unique across the tree; parents have children and are not
 * terminal; with a declared `events` list, every event is in it; targets exist and are leaves; the
 * initial state is a non-terminal leaf without entry actions; restarts only in terminal states;
 * context actions only with the follow-ups feature; the events each feature raises are handled in
 * every non-terminal leaf and `goal.hit` ends the conversation; delayed transitions target leaves,
 * never their own leaf nor from the initial state or its parents; every state and event a feature or
 * report names exists.
 *
 * @throws DefinitionError naming the file and the field.
 */
export function parseLifecycle(text: string, file: string): LifecycleDefinition {
  return lifecycleFrom(parseDefinitionYaml(text, file), file);
}

function lifecycleFrom(value: unknown, file: string): LifecycleDefinition {
  const chart = checkDefinition(StatechartFileSchema, value, file);
  const vocabulary = chart.events;
  const states: Record<string, StateNode> = {};
  const leaves: string[] = [];
  const visit = (name: string, node: StateNodeFile, parent: string | null) => {
    const field = parent ? `${fieldOf(states, parent)}.states.${name}` : `states.${name}`;
    if (Object.hasOwn(states, name))
      throw new DefinitionError(file, field, `duplicate state name "${name}" (also at ${fieldOf(states, name)})`);
    const children = Object.keys(node.states ?? {});
    if (node.states && children.length === 0)
      throw new DefinitionError(file, `${field}.states`, 'a parent state needs at least one child');
    if (children.length && node.terminal)
      throw new DefinitionError(file, `${field}.terminal`, 'only leaves can be terminal');
    states[name] = {
      name,
      path: parent ? `${states[parent]!.path}.${name}` : name,
      parent,
      children,
      terminal: node.terminal ?? false,
      entry: node.entry ?? [],
      on: normaliseOn(node.on, file, `${field}.on`, vocabulary),
      after: normaliseAfter(name, node.after, file, `${field}.after`),
      ...(node.description && { description: node.description }),
    };
    if (!children.length) leaves.push(name);
    for (const child of children) visit(child, node.states![child]!, name);
  };
  const on = normaliseOn(chart.on, file, 'on', vocabulary);
  for (const [name, node] of Object.entries(chart.states)) visit(name, node, null);
  const name = chart.entity.name ?? entityName(chart.entity.key);
  const timers =
    chart.features.followUps !== undefined ||
    chart.features.renewals !== undefined ||
    Object.values(states).some((s) => s.after.length);
  const base = {
    name: chart.name,
    description: chart.description,
    version: chart.version,
    file,
    entity: { key: chart.entity.key, name, plural: plural(name) },
    sources: [...new Set([...chart.sources, REPLAY_SOURCE, ...(timers ? [SCHEDULER_SOURCE] : [])])],
    events: vocabularyOf(chart, states),
    features: chart.features,
    reports: chart.reports,
    initial: chart.initial,
    on,
    states,
    roots: Object.keys(chart.states),
    leaves,
  };
  const def: LifecycleDefinition = { ...base, handlers: resolveHandlers(base) };
  validate(def, chart);
  return def;
}

const cache = new Map<string, LifecycleDefinition>();

/**
 * Load a lifecycle by name from `statemachines/<name>/statechart.yaml`, once per process.
 *
 * @example
 * const def = loadLifecycle('order-lifecycle');
 * def.handlers.placed['order.paid']; // { declaredIn: 'placed', transition: { kind: 'goto', target: 'paid', actions: [] } }
 */
export function loadLifecycle(name: string, root: string = STATEMACHINES_DIR): LifecycleDefinition {
  const path = join(root, name, 'statechart.yaml');
  const hit = cache.get(path);
  if (hit) return hit;
  if (!existsSync(path)) {
    const known = listLifecycles(root);
    throw new DefinitionError(
      relPath(path),
      '(file)',
      `no statechart for lifecycle "${name}" (known: ${known.join(', ') || 'none'})`,
    );
  }
  const def = lifecycleFrom(readDefinitionYaml(path), relPath(path));
  if (def.name !== name) throw new DefinitionError(def.file, 'name', `must match the folder name "${name}"`);
  cache.set(path, def);
  return def;
}

/** Lifecycle folders (those with a statechart.yaml) under `statemachines/`, sorted. */
export function listLifecycles(root: string = STATEMACHINES_DIR): string[] {
  if (!existsSync(root)) return [];
  return readdirSync(root)
    .filter((d) => existsSync(join(root, d, 'statechart.yaml')))
    .sort();
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

/** The agent config of a lifecycle without agents, or whose environment names none: no goal, no stops, no timers. */
export const NO_AGENT: AgentConfig = { goal: null, stopFollowUpsOn: [] };

function agentsDir(lifecycle: string, root: string): string {
  return join(root, lifecycle, 'agents');
}

/** Agent names (config file names without `.json`) of a lifecycle, sorted. */
export function listAgentConfigs(lifecycle: string, root: string = STATEMACHINES_DIR): string[] {
  const dir = agentsDir(lifecycle, root);
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .map((f) => f.slice(0, -'.json'.length))
    .sort();
}

/** Load `statemachines/<lifecycle>/agents/<agent>.json`, checked against the lifecycle. */
export function loadAgentConfig(agent: string, lifecycle: string, root: string = STATEMACHINES_DIR): AgentConfig {
  const path = join(agentsDir(lifecycle, root), `${agent}.json`);
  if (!existsSync(path)) {
    const known = listAgentConfigs(lifecycle, root);
    throw new DefinitionError(
      relPath(path),
      '(file)',
      `unknown agent "${agent}" (known: ${known.join(', ') || 'none'})`,
    );
  }
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (e) {
    throw new DefinitionError(relPath(path), '(json)', (e as Error).message);
  }
  const config = parseAgentConfig(raw, relPath(path));
  checkAgentConfig(config, loadLifecycle(lifecycle, root), relPath(path));
  return config;
}

/**
 * An agent config fits its lifecycle: every event and `state` a condition names is the
 * lifecycle's (a typo would make the condition silently never hold), and it uses only the features
 * the statechart opts into.
 * @throws DefinitionError naming the source and the field.
 */
export function checkAgentConfig(config: AgentConfig, def: LifecycleDefinition, source: string): void {
  const visit = (c: Condition, field: string): void => {
    if ('anyOf' in c) {
      c.anyOf.forEach((m, i) => visit(m, `${field}.anyOf.${i}`));
      return;
    }
    if ('allOf' in c) {
      c.allOf.forEach((m, i) => visit(m, `${field}.allOf.${i}`));
      return;
    }
    if (c.event !== undefined && !def.events.includes(c.event))
      throw new DefinitionError(
        source,
        `${field}.event`,
        `unknown event "${c.event}" (known: ${def.events.join(', ')})`,
      );
    if (c.state !== undefined && !Object.hasOwn(def.states, c.state))
      throw new DefinitionError(source, `${field}.state`, `"${c.state}" is not a state of ${def.name}`);
  };
  const needs = (used: boolean, field: string, feature: string) => {
    if (used)
      throw new DefinitionError(
        source,
        field,
        `${def.name} does not enable ${feature} (features.${feature} in ${def.file})`,
      );
  };
  const { features } = def;
  needs(!features.goals && config.goal !== null, 'goal', 'goals');
  needs(!features.goals && Boolean(config.stopConversationOn?.length), 'stopConversationOn', 'goals');
  needs(!features.followUps && config.stopFollowUpsOn.length > 0, 'stopFollowUpsOn', 'followUps');
  needs(
    !features.followUps && Boolean(config.timers?.followUpHours.length || config.timers?.coldAfterDays),
    'timers',
    'followUps',
  );
  needs(!features.renewals && Boolean(config.timers?.renewalAfterDays), 'timers.renewalAfterDays', 'renewals');
  if (config.goal) visit(config.goal, 'goal');
  config.stopFollowUpsOn.forEach((c, i) => visit(c, `stopFollowUpsOn.${i}`));
  (config.stopConversationOn ?? []).forEach((c, i) => visit(c, `stopConversationOn.${i}`));
  for (const [key, report] of Object.entries(config.reports ?? {})) {
    const event = ['count', 'rate', 'of', 'from', 'to', 'event'].find((f) => {
      const type = report[f as keyof typeof report];
      return type !== undefined && !def.events.includes(type);
    });
    if (event !== undefined)
      throw new DefinitionError(source, `reports.${key}.${event}`, `unknown event (known: ${def.events.join(', ')})`);
    if (report.in !== undefined && !Object.hasOwn(def.states, report.in))
      throw new DefinitionError(source, `reports.${key}.in`, `"${report.in}" is not a state of ${def.name}`);
  }
}
