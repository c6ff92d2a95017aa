/**
 * Time-based events, planned purely: which one-time schedules a state change sets or cancels, and
 * what the follow-up sender does when a follow-up is due. The schedules themselves live in
 * EventBridge Scheduler on AWS and in a clock-driven emulation locally (ports.ts, src/local/cloud/scheduler.ts).
 *
 * Per entity there is at most one schedule of each kind below, with deterministic names (a new one replaces the old):
 * - `follow-up-<entity>` (the `followUps` feature): the follow-up chain. Step n <= count delivers
 *   `follow_up.due` (the sender sends follow-up n, logs it as the feature's `sent` event and sets
 *   step n+1); step count+1 (when `coldAfterDays` is set) is the cold check: if the entity stayed
 *   silent (no `reply` event), the sender applies the feature's `exhausted` event.
 * - `renewal-<entity>` (the `renewals` feature): its `event` `renewalAfterDays` after the entity
 *   entered its `state`.
 * - `after-<entity>-<hash of the event type>` (a state's delayed transition, `after`): its event
 *   `after.<state>.<delay>` once the delay has passed since the entity entered the state; cancelled
 *   when the entity leaves it, re-armed for the new version while it moves between the state's children.
 *
 * Stale-safe: every delivery carries the entity's version when it was set. The renewal, the
 * delayed transitions and the exhausted event carry it as `detail.expectedVersion`, which the transition refuses when the
 * entity moved on; the sender drops a `follow_up.due` of another version. Cancelling is only tidying.
 */
import { createHash } from 'node:crypto';
import * as z from 'zod';
import { delayedStatesOnChange, durationMs } from '../../definitions/lifecycle/delays.ts';
import type { EntitySnapshot, LifecycleDefinition, LifecycleEvent } from '../../definitions/lifecycle/schema.ts';
import { LIFECYCLE_SOURCE, SCHEDULER_SOURCE } from '../../definitions/lifecycle/schema.ts';
import { NO_TIMERS, type TimersConfig } from '../../definitions/lifecycle/timers-config.ts';
import { FOLLOW_UP_DUE } from './envelope.ts';
import type { StateChangedDetail } from './state-changes.ts';
import { canReceiveFollowUp } from './transition.ts';

export type TimerKind = 'follow-up' | 'renewal' | 'after';

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
/** EventBridge Scheduler names: 1-64 of `[0-9a-zA-Z-_.]`. */
const MAX_NAME = 64;

/** The ordering of timers under one name: a timer only replaces one set no later than itself. */
export const TimerStampSchema = z
  .object({
    /** The entity's version when the timer was set. */
    version: z.number().int().nonnegative(),
    /** When the chain started (the change, or the entity's last reply): the sender restarts it after a newer reply. */
    setAt: z.iso.datetime({ offset: true }),
    /** Position in the follow-up chain (1 = first follow-up); 0 for other timers. */
    step: z.number().int().nonnegative(),
  })
  .strict();
export type TimerStamp = z.infer<typeof TimerStampSchema>;

/** A one-time schedule: when it is due, `delivery` is put on the lifecycle's bus. */
export interface TimerRequest {
  /** Deterministic per (kind, entity): setting it again replaces it. */
  name: string;
  kind: TimerKind;
  entityId: string;
  /** ISO time, whole seconds. */
  dueAt: string;
  stamp: TimerStamp;
  delivery: { source: string; detailType: string; detail: Record<string, unknown> };
}

/** `follow_up.due`: follow-up `step` of the chain set at `setAt` is due (step count+1: the cold check). */
export const FollowUpDueSchema = z
  .object({
    entityId: z.string().min(1),
    dueAt: z.iso.datetime({ offset: true }),
    timer: TimerStampSchema,
  })
  .strict();
export type FollowUpDue = z.infer<typeof FollowUpDueSchema>;

/**
 * Whether `next` may replace `current` under the same name (newer version, then later chain start, then later step).
 */
export function supersedes(next: TimerStamp, current: TimerStamp): boolean {
  if (next.version !== current.version) return next.version > current.version;
  const a = Date.parse(next.setAt);
  const b = Date.parse(current.setAt);
  if (a !== b) return a > b;
  return next.step >= current.step;
}

/**
 * The schedule name of an entity's timer, e.g. `follow-up-lead-42-1f2e3d4c5b6a`; `type` tells an
 * entity's delayed transitions apart (their event type is in the hash).
 */
export function timerName(kind: TimerKind, entityId: string, type?: string): string {
  const hash = createHash('sha256')
    .update(type === undefined ? entityId : `${entityId}\u0000${type}`)
    .digest('hex')
    .slice(0, 12);
  const readable = entityId.replace(/[^0-9a-zA-Z_.-]/g, '_').slice(0, MAX_NAME - kind.length - hash.length - 2);
  return `${kind}-${readable}-${hash}`;
}

const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
/** Schedules fire at whole seconds: round up, never early. */
const at = (ms: number) => iso(Math.ceil(ms / 1000) * 1000);

/** The delay before chain step `step` (1-based) after the previous one; `undefined`: the chain ends. */
function stepDelayMs(timers: TimersConfig, step: number): number | undefined {
  if (step <= timers.followUpHours.length) return timers.followUpHours[step - 1]! * HOUR_MS;
  if (step === timers.followUpHours.length + 1 && timers.coldAfterDays !== null) return timers.coldAfterDays * DAY_MS;
  return undefined;
}

function followUpTimer(entityId: string, dueMs: number, stamp: TimerStamp): TimerRequest {
  const dueAt = at(dueMs);
  const detail: FollowUpDue = { entityId, dueAt, timer: stamp };
  return {
    name: timerName('follow-up', entityId),
    kind: 'follow-up',
    entityId,
    dueAt,
    stamp,
    delivery: { source: LIFECYCLE_SOURCE, detailType: FOLLOW_UP_DUE, detail },
  };
}

/** The first step of a follow-up chain started at `setAtMs`, if the agent has one. */
function chainStart(
  timers: TimersConfig,
  entityId: string,
  version: number,
  setAtMs: number,
): TimerRequest | undefined {
  const delay = stepDelayMs(timers, 1);
  return delay === undefined
    ? undefined
    : followUpTimer(entityId, setAtMs + delay, { version, setAt: iso(setAtMs), step: 1 });
}

/** What a state change does to an entity's schedules. */
export interface TimerPlan {
  set: TimerRequest[];
  cancel: string[];
  /** Delayed transitions entered whose `detail.<field>` held no duration: no timer, and why. */
  unscheduled: { type: string; reason: string }[];
  /**
   * Timers that stay due when they are, re-armed for the entity's new version: a context-only change
   * (follow-ups stopped while in the renewal state) bumps the version but must not void the renewal.
   */
  restamp: { name: string; version: number }[];
}

/** `timer` re-armed for `version`: same name, due time and event id, the new version guard. */
export function restampTimer(timer: TimerRequest, version: number): TimerRequest {
  const detail = { ...timer.delivery.detail };
  if ('expectedVersion' in detail) detail.expectedVersion = version;
  if ('timer' in detail) detail.timer = { ...timer.stamp, version };
  return { ...timer, stamp: { ...timer.stamp, version }, delivery: { ...timer.delivery, detail } };
}

/**
 * The schedules a state change sets and cancels:
 * - (follow-ups) the entity can receive follow-ups → the follow-up chain starts from the change; it
 *   cannot → the chain is cancelled;
 * - (renewals) the entity entered the renewal state → the renewal event after `renewalAfterDays`;
 *   it left that state → cancelled; it stayed (a context-only change) → the pending renewal is
 *   re-armed for the new version;
 * - (`after`) the same for every delayed transition of a state entered, left or stayed in.
 */
export function timersForChange(
  def: LifecycleDefinition,
  timers: TimersConfig = NO_TIMERS,
  change: StateChangedDetail,
): TimerPlan {
  const plan: TimerPlan = { set: [], cancel: [], unscheduled: [], restamp: [] };
  planDelayedTransitions(def, change, plan);
  const changedAt = Date.parse(change.at);
  const { followUps, renewals } = def.features;
  if (followUps) {
    const first = change.canReceiveFollowUp
      ? chainStart(timers, change.entityId, change.version, changedAt)
      : undefined;
    if (first) plan.set.push(first);
    else if (!change.canReceiveFollowUp) plan.cancel.push(timerName('follow-up', change.entityId));
  }
  if (!renewals) return plan;
  const { state, event } = renewals;
  if (change.to === state && change.from !== state && timers.renewalAfterDays !== null) {
    const stamp: TimerStamp = { version: change.version, setAt: change.at, step: 0 };
    const dueAt = at(changedAt + timers.renewalAfterDays * DAY_MS);
    const name = timerName('renewal', change.entityId);
    plan.set.push({
      name,
      kind: 'renewal',
      entityId: change.entityId,
      dueAt,
      stamp,
      delivery: versionedDelivery(def, event, name, change),
    });
  } else if (change.from === state && change.to !== state) plan.cancel.push(timerName('renewal', change.entityId));
  else if (change.from === state && change.to === state)
    plan.restamp.push({ name: timerName('renewal', change.entityId), version: change.version });
  return plan;
}

/** An event a schedule applies, guarded by the version it was set at; its id is stable per timer, so a redelivered schedule is logged once. */
function versionedDelivery(
  def: LifecycleDefinition,
  detailType: string,
  name: string,
  change: StateChangedDetail,
): TimerRequest['delivery'] {
  return {
    source: SCHEDULER_SOURCE,
    detailType,
    detail: {
      [def.entity.key]: change.entityId,
      eventId: `${name}:v${change.version}`,
      expectedVersion: change.version,
    },
  };
}

/** The delayed transitions' timers: set on entering their state, cancelled on leaving it, re-armed while staying. */
function planDelayedTransitions(def: LifecycleDefinition, change: StateChangedDetail, plan: TimerPlan): void {
  for (const { delayed, change: what } of delayedStatesOnChange(def, change.from, change.to)) {
    const name = timerName('after', change.entityId, delayed.type);
    if (what === 'left') plan.cancel.push(name);
    else if (what === 'stayed') plan.restamp.push({ name, version: change.version });
    else {
      const text = 'field' in delayed.delay ? change.afterDelays?.[delayed.type] : undefined;
      const ms = 'ms' in delayed.delay ? delayed.delay.ms : text ? durationMs(text) : undefined;
      if (ms === undefined) {
        const field = 'field' in delayed.delay ? delayed.delay.field : '';
        const reason = `detail.${field} ${text ? `${JSON.stringify(text)} is not a duration` : 'holds no duration'}`;
        plan.unscheduled.push({ type: delayed.type, reason });
        continue;
      }
      plan.set.push({
        name,
        kind: 'after',
        entityId: change.entityId,
        dueAt: at(Date.parse(change.at) + ms),
        stamp: { version: change.version, setAt: change.at, step: 0 },
        delivery: versionedDelivery(def, delayed.type, name, change),
      });
    }
  }
}

/** What the follow-up sender does with a due follow-up. */
export type FollowUpDecision =
  /** The entity is gone or at another version: the timer belongs to an entity that moved on. Logged, nothing else. */
  | { outcome: 'stale'; reason: string }
  /** The entity cannot receive follow-ups now (follow-ups stopped, or another state at the same version). */
  | { outcome: 'not-eligible'; reason: string }
  /** The entity replied after the chain started: the chain starts again from the reply. */
  | { outcome: 'restarted'; next: TimerRequest | undefined }
  /** Send follow-up `followUp`, log it as `event`, then set `next` (if the chain goes on). */
  | { outcome: 'send'; followUp: number; event: LifecycleEvent; next: TimerRequest | undefined }
  /** The chain is over and the entity stayed silent: apply `event` (the feature's `exhausted`, guarded by the version). */
  | { outcome: 'exhausted'; event: LifecycleEvent };

/**
 * Decide what a due follow-up does. `entity` is the entity now; `lastReplyAt` the time of its last
 * reply (the feature's `reply` event). Events are timed at the due time, so a replay is deterministic.
 */
export function decideFollowUp(
  def: LifecycleDefinition,
  timers: TimersConfig = NO_TIMERS,
  due: FollowUpDue,
  entity: EntitySnapshot | undefined,
  lastReplyAt: string | undefined,
): FollowUpDecision {
  const { entityId, timer } = due;
  const followUps = def.features.followUps;
  if (!followUps) return { outcome: 'not-eligible', reason: `${def.name} has no follow-ups` };
  if (!entity) return { outcome: 'stale', reason: `${def.entity.name} ${entityId} has no events` };
  if (entity.version !== timer.version)
    return {
      outcome: 'stale',
      reason: `set at version ${timer.version}, the ${def.entity.name} is at version ${entity.version}`,
    };
  if (!canReceiveFollowUp(def, entity))
    return {
      outcome: 'not-eligible',
      reason: `${def.entity.name} is ${entity.state}${entity.context.followUpsStopped ? ' with follow-ups stopped' : ''}`,
    };
  if (lastReplyAt !== undefined && Date.parse(lastReplyAt) > Date.parse(timer.setAt))
    return { outcome: 'restarted', next: chainStart(timers, entityId, entity.version, Date.parse(lastReplyAt)) };
  const id = `${timerName('follow-up', entityId)}:v${timer.version}:${timer.setAt}:${timer.step}`;
  const dueMs = Date.parse(due.dueAt);
  if (timer.step > timers.followUpHours.length) {
    const event = {
      id,
      entityId,
      type: followUps.exhausted,
      time: due.dueAt,
      detail: { expectedVersion: timer.version },
    };
    return { outcome: 'exhausted', event };
  }
  const delay = stepDelayMs(timers, timer.step + 1);
  const next =
    delay === undefined ? undefined : followUpTimer(entityId, dueMs + delay, { ...timer, step: timer.step + 1 });
  const event = { id, entityId, type: followUps.sent, time: due.dueAt, detail: { followUp: timer.step } };
  return { outcome: 'send', followUp: timer.step, event, next };
}
