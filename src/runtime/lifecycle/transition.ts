/**
 * A lifecycle's semantics: a pure function from (definition, snapshot, event, agent config) to the
 * next snapshot, what it did and which system events to raise. No I/O and no clock: time comes
 * from the events, so replaying a log always gives the same result. The event store, the ASL
 * tasks and the CLI all call `applyEvent`.
 */
import * as z from 'zod';
import { InvalidInputError } from '../../core/errors.ts';
import type { AgentConfig } from '../../definitions/lifecycle/agent-config.ts';
import { delayedTransitionOf } from '../../definitions/lifecycle/delays.ts';
import {
  CONVERSATION_STOPPED,
  type ContextAction,
  type EntityContext,
  type EntitySnapshot,
  FOLLOW_UP_STOPPED,
  GOAL_HIT,
  handlerOf,
  isSystemEventType,
  knowsEvent,
  type LifecycleAction,
  type LifecycleDefinition,
  type LifecycleEvent,
  LifecycleEventSchema,
  type LoggedEvent,
  type Transition,
} from '../../definitions/lifecycle/schema.ts';
import { evaluateAgentConfig, STOP_PROGRESS_PREFIX } from './conditions.ts';

/** The context a conversation starts with: `followUpsStopped` only with the follow-ups feature. */
function initialContext(def: LifecycleDefinition): EntityContext {
  return def.features.followUps ? { followUpsStopped: false } : {};
}

/** A new entity: the definition's initial state, conversation 1, nothing logged yet. */
export function initialSnapshot(def: LifecycleDefinition): EntitySnapshot {
  return {
    state: def.initial,
    context: initialContext(def),
    version: 0,
    conversation: 1,
    eventCount: 0,
    progress: { matched: [] },
  };
}

/** Whether the follow-up sender may message the entity now: in a follow-up state, follow-ups not stopped. */
export function canReceiveFollowUp(def: LifecycleDefinition, snapshot: EntitySnapshot): boolean {
  return (def.features.followUps?.states.includes(snapshot.state) ?? false) && !snapshot.context.followUpsStopped;
}

/**
 * The dotted path of a state.
 *
 * @example pathOf(def, 'engaged') // 'active.lead_qualification.engaged'
 * @throws InvalidInputError for a name that is not a state of the definition.
 */
export function pathOf(def: LifecycleDefinition, state: string): string {
  if (!Object.hasOwn(def.states, state)) throw new InvalidInputError(`"${state}" is not a state of ${def.name}`);
  return def.states[state]!.path;
}

/** An entity as the CLI and APIs show it. */
export interface EntityStatus {
  state: string;
  path: string;
  context: EntityContext;
  version: number;
  conversation: number;
  eventCount: number;
}

/** The CLI's per-entity view: the snapshot without condition progress, plus the state's path. */
export function entityStatus(def: LifecycleDefinition, snapshot: EntitySnapshot): EntityStatus {
  const { state, context, version, conversation, eventCount } = snapshot;
  return { state, path: pathOf(def, state), context: { ...context }, version, conversation, eventCount };
}

const CONTEXT_ACTION_IMPL: Record<ContextAction, (s: EntitySnapshot) => EntitySnapshot> = {
  clearFollowUpStop: (s) => ({
    ...s,
    context: { ...s.context, followUpsStopped: false },
    progress: { matched: s.progress.matched.filter((p) => !p.startsWith(STOP_PROGRESS_PREFIX)) },
  }),
  stopFollowUps: (s) => ({ ...s, context: { ...s.context, followUpsStopped: true } }),
};

interface Step {
  snapshot: EntitySnapshot;
  actions: LifecycleAction[];
}

function run(s: EntitySnapshot, names: readonly ContextAction[], actions: LifecycleAction[]): EntitySnapshot {
  for (const name of names) {
    s = CONTEXT_ACTION_IMPL[name](s);
    actions.push({ type: name });
  }
  return s;
}

function ancestorsOrSelf(def: LifecycleDefinition, state: string): string[] {
  const chain: string[] = [];
  for (let s: string | null = state; s; s = def.states[s]!.parent) chain.unshift(s);
  return chain;
}

/**
 * Take a transition to `target` (a leaf other than the current one): transition actions, then the
 * entry actions of every state entered, outermost first. Leaving a terminal state for a
 * non-terminal one starts the next conversation from the initial context, as if from the initial state.
 */
function enter(
  def: LifecycleDefinition,
  s: EntitySnapshot,
  target: string,
  transitionActions: readonly ContextAction[],
): Step {
  const actions: LifecycleAction[] = [];
  let from = s.state;
  let next: EntitySnapshot = { ...s, version: s.version + 1 };
  if (def.states[s.state]!.terminal && !def.states[target]!.terminal) {
    next = { ...next, context: initialContext(def), progress: { matched: [] }, conversation: s.conversation + 1 };
    actions.push({ type: 'startConversation', conversation: next.conversation });
    from = def.initial;
  }
  next = run(next, transitionActions, actions);
  const kept = new Set(ancestorsOrSelf(def, from));
  for (const state of ancestorsOrSelf(def, target).filter((x) => !kept.has(x)))
    next = run(next, def.states[state]!.entry, actions);
  return { snapshot: { ...next, state: target }, actions };
}

/** A targetless transition: no exit, no entry, only its actions. */
function stay(s: EntitySnapshot, names: readonly ContextAction[]): Step {
  if (!names.length) return { snapshot: s, actions: [] };
  const actions: LifecycleAction[] = [];
  return { snapshot: run({ ...s, version: s.version + 1 }, names, actions), actions };
}

function endsConversation(def: LifecycleDefinition, leaf: string, type: string): boolean {
  const t = handlerOf(def, leaf, type)?.transition;
  return t?.kind === 'goto' && def.states[t.target]!.terminal;
}

function isLeaf(def: LifecycleDefinition, state: string): boolean {
  return Object.hasOwn(def.states, state) && def.states[state]!.children.length === 0;
}

/** Take `t`, the handler of the leaf `s` is in for an event of `type`. */
function takeTransition(
  def: LifecycleDefinition,
  s: EntitySnapshot,
  t: Transition | undefined,
  type: string,
  detail: LifecycleEvent['detail'],
): Step {
  if (!t) return { snapshot: s, actions: [] };
  switch (t.kind) {
    case 'stay':
      return stay(s, t.actions);
    case 'goto':
      return enter(def, s, t.target, t.actions);
    case 'restart': {
      // Validated at load: the initial state handles this event with a goto to a non-terminal leaf.
      const first = handlerOf(def, def.initial, type)!.transition as Extract<Transition, { kind: 'goto' }>;
      return enter(def, s, first.target, first.actions);
    }
    case 'fromDetail': {
      const target = detail && Object.hasOwn(detail, t.field) ? detail[t.field] : undefined;
      if (typeof target !== 'string' || !isLeaf(def, target)) {
        const problem =
          target === undefined ? 'is missing' : `${JSON.stringify(target)} is not a leaf state of ${def.name}`;
        return { snapshot: s, actions: [{ type: 'refuse', reason: `${type}: detail.${t.field} ${problem}` }] };
      }
      return target === s.state ? stay(s, t.actions) : enter(def, s, target, t.actions);
    }
  }
}

/** A field of an event's detail (own properties only: detail is data, never a prototype). */
const detailField = (ev: LifecycleEvent, field: string): unknown =>
  ev.detail && Object.hasOwn(ev.detail, field) ? ev.detail[field] : undefined;

/**
 * Why an event is refused as out of date, if it is:
 * - `detail.expectedVersion` (timers, and any producer that acted on what it read): the entity's
 *   version must still be that; a timer set before the entity moved on is logged and ignored. A
 *   delayed transition's event without it did not come from its timer.
 * - a placement (`targetFromDetail`) with `versionFrom`: the version the external system's update
 *   is based on (as the sync sent it); older than the entity's version means the entity moved on
 *   since, so a late echo cannot move it back.
 * - a placement with `timeFrom`: the external system's own time of the change (for systems that do
 *   not echo our version); older than the newest placement applied means it arrived out of order.
 * A placement with neither is the external system's unconditional word. `t` is the handler of the entity's leaf for the event.
 */
function staleness(
  def: LifecycleDefinition,
  s: EntitySnapshot,
  ev: LifecycleEvent,
  t: Transition | undefined,
): string | undefined {
  const expected = detailField(ev, 'expectedVersion');
  // Only a delayed transition's own timer, which carries the version it was set at, may apply its event.
  const delayed = delayedTransitionOf(def, ev.type);
  if (delayed && expected === undefined)
    return `${ev.type}: only the timer of ${delayed.state}'s delayed transition applies it (detail.expectedVersion is missing)`;
  if (expected !== undefined) {
    if (!Number.isSafeInteger(expected)) return `detail.expectedVersion ${JSON.stringify(expected)} is not a version`;
    if (expected !== s.version)
      return `stale: expected version ${String(expected)}, the ${def.entity.name} is at version ${s.version}`;
  }
  if (t?.kind !== 'fromDetail') return undefined;
  const basedOn = t.versionFrom === undefined ? undefined : detailField(ev, t.versionFrom);
  if (basedOn !== undefined) {
    if (!Number.isSafeInteger(basedOn) || (basedOn as number) < 0)
      return `${ev.type}: detail.${t.versionFrom} ${JSON.stringify(basedOn)} is not a version`;
    if ((basedOn as number) < s.version)
      return `${ev.type}: based on version ${String(basedOn)}, older than the ${def.entity.name}'s version ${s.version}`;
  }
  const at = t.timeFrom === undefined ? undefined : detailField(ev, t.timeFrom);
  if (at !== undefined) {
    if (typeof at !== 'string' || !ISO_TIME.safeParse(at).success)
      return `${ev.type}: detail.${t.timeFrom} ${JSON.stringify(at)} is not an ISO time`;
    if (s.placedAt !== undefined && Date.parse(at) < Date.parse(s.placedAt))
      return `${ev.type}: detail.${t.timeFrom} ${at} is older than the newest one applied (${s.placedAt})`;
  }
  return undefined;
}

const ISO_TIME = z.iso.datetime({ offset: true });

function systemEvent(trigger: LifecycleEvent, type: string): LifecycleEvent {
  return {
    id: `${trigger.id}:${type}`,
    entityId: trigger.entityId,
    type,
    time: trigger.time,
    detail: { triggeredBy: trigger.id },
  };
}

/** The result of applying one event. */
export interface TransitionResult {
  /** `eventCount` is always one more (the event is logged whatever happens); `version` one more when a transition applied. */
  snapshot: EntitySnapshot;
  /** What was done, in order; a refusal explains why the event changed nothing. */
  actions: LifecycleAction[];
  /**
   * System events to apply next, in order: `follow_up.stopped` when a stop condition holds and
   * follow-ups are not stopped yet, then `goal.hit` when the goal holds, else
   * `conversation.stopped` when a conversation stop holds. Their ids are
   * `<trigger id>:<type>`, so a redelivered trigger raises the same ids.
   */
  emitted: LifecycleEvent[];
}

/**
 * Apply one event to an entity's snapshot.
 *
 * 1. The leaf's handler for the event type is taken (the deepest state declaring it wins). No
 *    handler: the snapshot only counts the event. A type outside the vocabulary, or an invalid
 *    `targetFromDetail` target: the same, with a `refuse` action.
 *    A stale event (`detail.expectedVersion` not the entity's version, or a placement based on an
 *    older version) is refused the same way.
 * 2. If the entity is still in a conversation (a non-terminal state) and the event is not a system
 *    event, the agent config's goal and stop conditions are checked against it and the state it
 *    left the entity in (with the goals and follow-ups features).
 *
 * @throws InvalidInputError when the event has no usable id, entity id or ISO time, or the snapshot's
 * state is not a leaf of the definition: such input cannot be logged.
 */
export function transition(
  def: LifecycleDefinition,
  snapshot: EntitySnapshot,
  event: LifecycleEvent,
  config: AgentConfig,
): TransitionResult {
  return step(def, snapshot, parseEvent(event), config);
}

function parseEvent(event: unknown): LifecycleEvent {
  const parsed = LifecycleEventSchema.safeParse(event);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  throw new InvalidInputError(`lifecycle event: ${issue.path.join('.') || '(root)'}: ${issue.message}`);
}

function step(
  def: LifecycleDefinition,
  snapshot: EntitySnapshot,
  ev: LifecycleEvent,
  config: AgentConfig,
): TransitionResult {
  if (!isLeaf(def, snapshot.state))
    throw new InvalidInputError(`snapshot state "${snapshot.state}" is not a leaf state of ${def.name}`);
  const counted: EntitySnapshot = { ...snapshot, eventCount: snapshot.eventCount + 1 };
  if (!knowsEvent(def, ev.type))
    return { snapshot: counted, actions: [{ type: 'refuse', reason: `unknown event type "${ev.type}"` }], emitted: [] };
  // A stale event changes nothing and meets no condition: it describes an entity that no longer exists.
  const handler = handlerOf(def, snapshot.state, ev.type)?.transition;
  const stale = staleness(def, snapshot, ev, handler);
  if (stale) return { snapshot: counted, actions: [{ type: 'refuse', reason: stale }], emitted: [] };
  let taken = takeTransition(def, counted, handler, ev.type, ev.detail);
  // Remember the external time of an applied placement, so that an older one arriving later is refused.
  const placedAt =
    handler?.kind === 'fromDetail' && handler.timeFrom !== undefined && !taken.actions.some((a) => a.type === 'refuse')
      ? detailField(ev, handler.timeFrom)
      : undefined;
  if (typeof placedAt === 'string') taken = { ...taken, snapshot: { ...taken.snapshot, placedAt } };
  if (isSystemEventType(ev.type) || def.states[taken.snapshot.state]!.terminal) return { ...taken, emitted: [] };
  const { goals, followUps } = def.features;
  if (!goals && !followUps) return { ...taken, emitted: [] };
  const states = ancestorsOrSelf(def, taken.snapshot.state);
  const { goalMet, stopMatched, conversationStopMatched, matched } = evaluateAgentConfig(
    config,
    ev,
    taken.snapshot.progress.matched,
    states,
  );
  const emitted: LifecycleEvent[] = [];
  if (followUps && stopMatched && !taken.snapshot.context.followUpsStopped)
    emitted.push(systemEvent(ev, FOLLOW_UP_STOPPED));
  if (goals && goalMet) emitted.push(systemEvent(ev, GOAL_HIT));
  // The goal wins: a conversation that met it is not also "stopped without its goal". Raised only
  // where the statechart ends the conversation on it, so a configured stop can never loop.
  else if (goals && conversationStopMatched && endsConversation(def, taken.snapshot.state, CONVERSATION_STOPPED))
    emitted.push(systemEvent(ev, CONVERSATION_STOPPED));
  return { snapshot: { ...taken.snapshot, progress: { matched } }, actions: taken.actions, emitted };
}

/** The result of `applyEvent`. */
export interface ApplyResult {
  snapshot: EntitySnapshot;
  /** The events to append, the given one first, then every system event it raised; `seq` continues the log. */
  events: LoggedEvent[];
}

/**
 * Apply an event and then, in order, every system event it raised: the one semantics the event
 * store, the ASL tasks and the CLI share. Append `events` and store `snapshot` in one write,
 * conditional on the stored `eventCount` being `snapshot.eventCount` before the call.
 *
 * Idempotency is the caller's: skip an event whose id is already in the log. Raised events' ids
 * derive from the trigger's, so a redelivered trigger would raise the same ids.
 *
 * @example
 * const def = loadLifecycle('order-lifecycle');
 * const order = initialSnapshot(def);
 * const r = applyEvent(def, order, { id: 'e1', entityId: 'o-1', type: 'order.paid', time: '2025-01-01T09:00:00Z' }, NO_AGENT);
 * r.snapshot.state; // 'paid'
 * r.events[0];      // { id: 'e1', seq: 1, stateBefore: 'placed', stateAfter: 'paid', conversation: 1, actions: [], ... }
 */
export function applyEvent(
  def: LifecycleDefinition,
  snapshot: EntitySnapshot,
  event: LifecycleEvent,
  config: AgentConfig,
): ApplyResult {
  const events: LoggedEvent[] = [];
  const queue = [event];
  let current = snapshot;
  for (let next = queue.shift(); next; next = queue.shift()) {
    const ev = parseEvent(next);
    const r = step(def, current, ev, config);
    events.push({
      ...ev,
      seq: r.snapshot.eventCount,
      conversation: r.snapshot.conversation,
      stateBefore: current.state,
      stateAfter: r.snapshot.state,
      actions: r.actions,
    });
    current = r.snapshot;
    queue.push(...r.emitted);
  }
  return { snapshot: current, events };
}
