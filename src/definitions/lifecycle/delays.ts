/**
 * Delayed transitions (`after` on a state): the duration grammar, the event type a timer applies,
 * and which states a change enters and leaves. Shared by the loader, the state change the outbox
 * publishes, the timer planner and the views (Mermaid, XState), so that each reads `after` the same way.
 */
import { type DelayedTransition, DURATION_PATTERN, type LifecycleDefinition } from './schema.ts';

const UNIT_MS = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 } as const;

/** The prefix of the event types delayed transitions apply; no other event may use it. */
export const AFTER_PREFIX = 'after.';

/**
 * A duration in milliseconds, or `undefined` for text that is not one.
 * @example durationMs('14d') // 1209600000; durationMs('14 days') // undefined
 */
export function durationMs(text: string): number | undefined {
  const m = DURATION_PATTERN.exec(text);
  return m ? Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS] : undefined;
}

/** The event a delayed transition's timer applies: `after.delivered.14d`. */
export const afterEventType = (state: string, key: string): string => `${AFTER_PREFIX}${state}.${key}`;

/** Every delayed transition of the lifecycle with the state declaring it, in document order. */
export function delayedTransitions(def: LifecycleDefinition): { state: string; delayed: DelayedTransition }[] {
  return Object.values(def.states).flatMap((s) => s.after.map((delayed) => ({ state: s.name, delayed })));
}

/** The delayed transition whose timer applies events of `type`, if any. */
export function delayedTransitionOf(
  def: LifecycleDefinition,
  type: string,
): { state: string; delayed: DelayedTransition } | undefined {
  if (!type.startsWith(AFTER_PREFIX)) return undefined;
  return delayedTransitions(def).find(({ delayed }) => delayed.type === type);
}

/** Whether the lifecycle has timers at all: follow-ups, renewals or a delayed transition. */
export function hasTimers(def: LifecycleDefinition): boolean {
  return Boolean(def.features.followUps || def.features.renewals) || delayedTransitions(def).length > 0;
}

/** A leaf and its ancestors. */
function lineage(def: LifecycleDefinition, leaf: string): Set<string> {
  const chain = new Set<string>();
  for (let s: string | null = leaf; s; s = def.states[s]!.parent) chain.add(s);
  return chain;
}

/**
 * Per state with delayed transitions, what a change from leaf `from` to leaf `to` does to it:
 * entered (its timers start), left (cancelled) or stayed (a move between its children, or a
 * context-only change: its timers go on).
 */
export function delayedStatesOnChange(
  def: LifecycleDefinition,
  from: string,
  to: string,
): { state: string; delayed: DelayedTransition; change: 'entered' | 'left' | 'stayed' }[] {
  const before = lineage(def, from);
  const after = lineage(def, to);
  return delayedTransitions(def).flatMap(({ state, delayed }) => {
    const was = before.has(state);
    const is = after.has(state);
    if (!was && !is) return [];
    return [{ state, delayed, change: was && is ? 'stayed' : is ? 'entered' : 'left' }] as const;
  });
}
