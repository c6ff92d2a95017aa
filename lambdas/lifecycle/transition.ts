/**
 * The lead lifecycle's semantics: a pure function from (definition, snapshot, event, agent config)
 * to the next snapshot, what it did and which system events to raise. No I/O and no clock: time
 * comes from the events, so replaying a log always gives the same result. The event store, the
 * ASL tasks and the CLI all call `applyEvent`.
 */
import * as z from 'zod';
import { InvalidInputError } from '../lib/errors.ts';
import { STOP_PROGRESS_PREFIX, evaluateAgentConfig, type AgentConfig } from './conditions.ts';
import {
  LifecycleEventSchema,
  isLeadEventType,
  isSystemEventType,
  type ContextAction,
  type LeadContext,
  type LeadEventType,
  type LeadSnapshot,
  type LifecycleAction,
  type LifecycleDefinition,
  type LifecycleEvent,
  type LoggedEvent,
  type SystemEventType,
  type Transition,
} from './schema.ts';

const INITIAL_CONTEXT: LeadContext = { followUpsStopped: false };

/** States in which the follow-up scheduler may send (the seed's `can_receive_follow_up`). */
export const FOLLOW_UP_STATES: readonly string[] = ['outreach', 'engaged'];

/** A new lead: the definition's initial state, conversation 1, nothing logged yet. */
export function initialSnapshot(def: LifecycleDefinition): LeadSnapshot {
  return { state: def.initial, context: { ...INITIAL_CONTEXT }, version: 0, conversation: 1, eventCount: 0, progress: { matched: [] } };
}

/** Whether the follow-up scheduler may message the lead now. */
export function canReceiveFollowUp(snapshot: LeadSnapshot): boolean {
  return FOLLOW_UP_STATES.includes(snapshot.state) && !snapshot.context.followUpsStopped;
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

/** A lead as the CLI and APIs show it. */
export interface LeadStatus {
  state: string;
  path: string;
  context: LeadContext;
  version: number;
  conversation: number;
  eventCount: number;
}

/** The CLI's per-lead view: the snapshot without condition progress, plus the state's path. */
export function leadStatus(def: LifecycleDefinition, snapshot: LeadSnapshot): LeadStatus {
  const { state, context, version, conversation, eventCount } = snapshot;
  return { state, path: pathOf(def, state), context: { ...context }, version, conversation, eventCount };
}

const CONTEXT_ACTION_IMPL: Record<ContextAction, (s: LeadSnapshot) => LeadSnapshot> = {
  clearFollowUpStop: (s) => ({
    ...s,
    context: { ...s.context, followUpsStopped: false },
    progress: { matched: s.progress.matched.filter((p) => !p.startsWith(STOP_PROGRESS_PREFIX)) },
  }),
  stopFollowUps: (s) => ({ ...s, context: { ...s.context, followUpsStopped: true } }),
};

interface Step {
  snapshot: LeadSnapshot;
  actions: LifecycleAction[];
}

function run(s: LeadSnapshot, names: readonly ContextAction[], actions: LifecycleAction[]): LeadSnapshot {
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
function enter(def: LifecycleDefinition, s: LeadSnapshot, target: string, transitionActions: readonly ContextAction[]): Step {
  const actions: LifecycleAction[] = [];
  let from = s.state;
  let next: LeadSnapshot = { ...s, version: s.version + 1 };
  if (def.states[s.state]!.terminal && !def.states[target]!.terminal) {
    next = { ...next, context: { ...INITIAL_CONTEXT }, progress: { matched: [] }, conversation: s.conversation + 1 };
    actions.push({ type: 'startConversation', conversation: next.conversation });
    from = def.initial;
  }
  next = run(next, transitionActions, actions);
  const kept = new Set(ancestorsOrSelf(def, from));
  for (const state of ancestorsOrSelf(def, target).filter((x) => !kept.has(x))) next = run(next, def.states[state]!.entry, actions);
  return { snapshot: { ...next, state: target }, actions };
}

/** A targetless transition: no exit, no entry, only its actions. */
function stay(s: LeadSnapshot, names: readonly ContextAction[]): Step {
  if (!names.length) return { snapshot: s, actions: [] };
  const actions: LifecycleAction[] = [];
  return { snapshot: run({ ...s, version: s.version + 1 }, names, actions), actions };
}

function endsConversation(def: LifecycleDefinition, leaf: string, type: LeadEventType): boolean {
  const t = def.handlers[leaf]![type]?.transition;
  return t?.kind === 'goto' && def.states[t.target]!.terminal;
}

function isLeaf(def: LifecycleDefinition, state: string): boolean {
  return Object.hasOwn(def.states, state) && def.states[state]!.children.length === 0;
}

function takeTransition(def: LifecycleDefinition, s: LeadSnapshot, type: LeadEventType, detail: LifecycleEvent['detail']): Step {
  const t = def.handlers[s.state]![type]?.transition;
  if (!t) return { snapshot: s, actions: [] };
  switch (t.kind) {
    case 'stay':
      return stay(s, t.actions);
    case 'goto':
      return enter(def, s, t.target, t.actions);
    case 'restart': {
      // Validated at load: the initial state handles this event with a goto to a non-terminal leaf.
      const first = def.handlers[def.initial]![type]!.transition as Extract<Transition, { kind: 'goto' }>;
      return enter(def, s, first.target, first.actions);
    }
    case 'fromDetail': {
      const target = detail?.[t.field];
      if (typeof target !== 'string' || !isLeaf(def, target)) {
        const problem = target === undefined ? 'is missing' : `${JSON.stringify(target)} is not a leaf state of ${def.name}`;
        return { snapshot: s, actions: [{ type: 'refuse', reason: `${type}: detail.${t.field} ${problem}` }] };
      }
      return target === s.state ? stay(s, t.actions) : enter(def, s, target, t.actions);
    }
  }
}

/**
 * Why an event is refused as out of date, if it is:
 * - `detail.expectedVersion` (timers, and any producer that acted on what it read): the lead's
 *   version must still be that; a timer set before the lead moved on is logged and ignored.
 * - `crm.state_set` with `detail.version` (the lifecycle version the CRM's update is based on, as
 *   the CRM sync sent it): older than the lead's version means the lead moved on since, so a late
 *   CRM echo cannot move it back.
 * - `crm.state_set` with `detail.crmUpdatedAt` (the CRM's own time of the change, for CRMs that do
 *   not echo our version): older than the newest CRM set applied means it arrived out of order.
 * A set with neither is the CRM's unconditional word.
 */
function staleness(s: LeadSnapshot, ev: LifecycleEvent): string | undefined {
  const expected = ev.detail?.expectedVersion;
  if (expected !== undefined) {
    if (!Number.isSafeInteger(expected)) return `detail.expectedVersion ${JSON.stringify(expected)} is not a version`;
    if (expected !== s.version) return `stale: expected version ${String(expected)}, the lead is at version ${s.version}`;
  }
  const crmVersion = ev.type === 'crm.state_set' ? ev.detail?.version : undefined;
  if (crmVersion !== undefined) {
    if (!Number.isSafeInteger(crmVersion) || (crmVersion as number) < 0) return `crm.state_set: detail.version ${JSON.stringify(crmVersion)} is not a version`;
    if ((crmVersion as number) < s.version) return `crm.state_set: based on version ${String(crmVersion)}, older than the lead's version ${s.version}`;
  }
  const crmAt = ev.type === 'crm.state_set' ? ev.detail?.crmUpdatedAt : undefined;
  if (crmAt !== undefined) {
    if (typeof crmAt !== 'string' || !ISO_TIME.safeParse(crmAt).success) return `crm.state_set: detail.crmUpdatedAt ${JSON.stringify(crmAt)} is not an ISO time`;
    if (s.crmUpdatedAt !== undefined && Date.parse(crmAt) < Date.parse(s.crmUpdatedAt))
      return `crm.state_set: CRM time ${crmAt} is older than the newest CRM set applied (${s.crmUpdatedAt})`;
  }
  return undefined;
}

const ISO_TIME = z.iso.datetime({ offset: true });

function systemEvent(trigger: LifecycleEvent, type: SystemEventType | 'conversation.stopped'): LifecycleEvent {
  return { id: `${trigger.id}:${type}`, leadId: trigger.leadId, type, time: trigger.time, detail: { triggeredBy: trigger.id } };
}

/** The result of applying one event. */
export interface TransitionResult {
  /** `eventCount` is always one more (the event is logged whatever happens); `version` one more when a transition applied. */
  snapshot: LeadSnapshot;
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
 * Apply one event to a lead's snapshot.
 *
 * 1. The leaf's handler for the event type is taken (the deepest state declaring it wins). No
 *    handler: the snapshot only counts the event. Unknown type or invalid `crm.state_set` target:
 *    the same, with a `refuse` action.
 *    A stale event (`detail.expectedVersion` not the lead's version, or a `crm.state_set` based on
 *    an older version) is refused the same way.
 * 2. If the lead is still in a conversation (a non-terminal state) and the event is not a system
 *    event, the agent config's goal and stop conditions are checked against it and the state it
 *    left the lead in.
 *
 * @throws InvalidInputError when the event has no usable id, lead id or ISO time, or the snapshot's
 * state is not a leaf of the definition: such input cannot be logged.
 */
export function transition(def: LifecycleDefinition, snapshot: LeadSnapshot, event: LifecycleEvent, config: AgentConfig): TransitionResult {
  return step(def, snapshot, parseEvent(event), config);
}

function parseEvent(event: unknown): LifecycleEvent {
  const parsed = LifecycleEventSchema.safeParse(event);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  throw new InvalidInputError(`lifecycle event: ${issue.path.join('.') || '(root)'}: ${issue.message}`);
}

function step(def: LifecycleDefinition, snapshot: LeadSnapshot, ev: LifecycleEvent, config: AgentConfig): TransitionResult {
  if (!isLeaf(def, snapshot.state)) throw new InvalidInputError(`snapshot state "${snapshot.state}" is not a leaf state of ${def.name}`);
  const counted: LeadSnapshot = { ...snapshot, eventCount: snapshot.eventCount + 1 };
  if (!isLeadEventType(ev.type))
    return { snapshot: counted, actions: [{ type: 'refuse', reason: `unknown event type "${ev.type}"` }], emitted: [] };
  // A stale event changes nothing and meets no condition: it describes a lead that no longer exists.
  const stale = staleness(snapshot, ev);
  if (stale) return { snapshot: counted, actions: [{ type: 'refuse', reason: stale }], emitted: [] };
  let taken = takeTransition(def, counted, ev.type, ev.detail);
  // Remember the CRM's time of an applied set, so that an older one arriving later is refused.
  const crmAt = ev.type === 'crm.state_set' && !taken.actions.some((a) => a.type === 'refuse') ? ev.detail?.crmUpdatedAt : undefined;
  if (typeof crmAt === 'string') taken = { ...taken, snapshot: { ...taken.snapshot, crmUpdatedAt: crmAt } };
  if (isSystemEventType(ev.type) || def.states[taken.snapshot.state]!.terminal) return { ...taken, emitted: [] };
  const states = ancestorsOrSelf(def, taken.snapshot.state);
  const { goalMet, stopMatched, conversationStopMatched, matched } = evaluateAgentConfig(config, ev, taken.snapshot.progress.matched, states);
  const emitted: LifecycleEvent[] = [];
  if (stopMatched && !taken.snapshot.context.followUpsStopped) emitted.push(systemEvent(ev, 'follow_up.stopped'));
  if (goalMet) emitted.push(systemEvent(ev, 'goal.hit'));
  // The goal wins: a conversation that met it is not also "stopped without its goal". Raised only
  // where the statechart ends the conversation on it, so a configured stop can never loop.
  else if (conversationStopMatched && endsConversation(def, taken.snapshot.state, 'conversation.stopped'))
    emitted.push(systemEvent(ev, 'conversation.stopped'));
  return { snapshot: { ...taken.snapshot, progress: { matched } }, actions: taken.actions, emitted };
}

/** The result of `applyEvent`. */
export interface ApplyResult {
  snapshot: LeadSnapshot;
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
 * const def = loadLifecycle();
 * let lead = initialSnapshot(def);
 * const r = applyEvent(def, lead, { id: 'e1', leadId: 'l1', type: 'agent.message_sent', time: '2025-01-01T09:00:00Z' }, config);
 * r.snapshot.state; // 'outreach'
 * r.events[0];      // { id: 'e1', seq: 1, stateBefore: 'idle', stateAfter: 'outreach', conversation: 1, actions: [], ... }
 */
export function applyEvent(def: LifecycleDefinition, snapshot: LeadSnapshot, event: LifecycleEvent, config: AgentConfig): ApplyResult {
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
