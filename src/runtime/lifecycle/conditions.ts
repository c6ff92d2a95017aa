/**
 * Condition evaluation: when the agent's goal is met (the lifecycle raises `goal.hit`) and when
 * follow-ups stop (it raises `follow_up.stopped`). Pure. The conditions' format is the agent
 * config's (src/definitions/lifecycle/agent-config.ts).
 */
import type { AgentConfig, Condition, EventCondition, FieldTest } from '../../definitions/lifecycle/agent-config.ts';

/** The part of an event conditions look at. */
export interface ConditionEvent {
  type: string;
  detail?: Record<string, unknown>;
}

/**
 * What a `{ state, sparky }` condition looks at: where the event left the entity (its leaf and the leaf's parents) and
 * the agent's switch.
 */
export interface ConditionSituation {
  /** The entity's leaf and every parent of it. */
  states: readonly string[];
  sparky: boolean;
}

/**
 * Plain decimal notation only. `Number()` also reads `"0x2710"`, `"0b1"`, `"1e4"`, `"Infinity"`
 * and padded strings, so a CRM field like `"0x2710"` would pass `gte: 10000`.
 */
const DECIMAL = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)$/;

/** The number a detail value stands for: a finite number, or a string in plain decimal notation. */
export function asNumber(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value === 'string' && DECIMAL.test(value)) return Number(value);
  return undefined;
}

function fieldPasses(test: FieldTest, value: unknown): boolean {
  if (value === undefined) return false;
  const n = asNumber(value);
  const checks: boolean[] = [];
  if ('eq' in test) checks.push(value === test.eq);
  if (test.gt !== undefined) checks.push(n !== undefined && n > test.gt);
  if (test.gte !== undefined) checks.push(n !== undefined && n >= test.gte);
  if (test.lt !== undefined) checks.push(n !== undefined && n < test.lt);
  if (test.lte !== undefined) checks.push(n !== undefined && n <= test.lte);
  if (test.contains !== undefined) {
    const needle = test.contains;
    checks.push(
      typeof value === 'string'
        ? typeof needle === 'string' && value.toLowerCase().includes(needle.toLowerCase())
        : Array.isArray(value) && value.includes(needle),
    );
  }
  return checks.every(Boolean);
}

/**
 * Whether an `{ event?, where?, state?, sparky? }` condition matches one event. Without a
 * situation (no entity at hand) a `state` or `sparky` part never holds.
 */
export function eventMatches(
  condition: EventCondition,
  event: ConditionEvent,
  situation?: ConditionSituation,
): boolean {
  if (condition.event !== undefined && condition.event !== event.type) return false;
  if (condition.state !== undefined && !situation?.states.includes(condition.state)) return false;
  if (condition.sparky !== undefined && situation?.sparky !== condition.sparky) return false;
  return Object.entries(condition.where ?? {}).every(([field, test]) => fieldPasses(test, event.detail?.[field]));
}

/** Whether a condition holds for `event`, and the members that have matched in this conversation so far. */
export interface ConditionResult {
  holds: boolean;
  matched: string[];
}

/**
 * Evaluate a condition against the current event. `matched` lists the members (by path: `path.i`
 * for the i-th member of an `allOf` at `path`) that held for an earlier event of this
 * conversation; an `allOf` holds once every member has held for some event.
 *
 * @example
 * const c = { allOf: [{ event: 'link.clicked' }, { event: 'meeting.booked' }] };
 * const a = conditionMatches(c, { type: 'link.clicked' });        // { holds: false, matched: ['c.0'] }
 * conditionMatches(c, { type: 'meeting.booked' }, a.matched).holds; // true
 */
export function conditionMatches(
  condition: Condition,
  event: ConditionEvent,
  matched: readonly string[] = [],
  path = 'c',
  situation?: ConditionSituation,
): ConditionResult {
  if (!('anyOf' in condition) && !('allOf' in condition))
    return { holds: eventMatches(condition, event, situation), matched: [...matched] };
  let seen = [...matched];
  const members = 'anyOf' in condition ? condition.anyOf : condition.allOf;
  // Every member is evaluated (no short-circuit) so each one's progress is recorded.
  const holds = members.map((member, i) => {
    const r = conditionMatches(member, event, seen, `${path}.${i}`, situation);
    seen = r.matched;
    return r.holds;
  });
  if ('anyOf' in condition) return { holds: holds.some(Boolean), matched: seen };
  const memberPaths = members.map((_, i) => `${path}.${i}`);
  memberPaths.forEach((p, i) => {
    if (holds[i] && !seen.includes(p)) seen.push(p);
  });
  return { holds: memberPaths.every((p) => seen.includes(p)), matched: seen };
}

/** Path prefix of stop-condition progress: `clearFollowUpStop` forgets it. */
export const STOP_PROGRESS_PREFIX = 'stopFollowUpsOn.';

/** The outcome of checking an agent's config against one event. */
export interface ConfigEvaluation {
  goalMet: boolean;
  stopMatched: boolean;
  conversationStopMatched: boolean;
  matched: string[];
}

/**
 * Check the goal, every follow-up stop and every conversation stop against one event of the
 * current conversation, with the entity where the event left it (`states`: its leaf and parents).
 * Progress paths are `goal...`, `stopFollowUpsOn.<i>...` and `stopConversationOn.<i>...`.
 */
export function evaluateAgentConfig(
  config: AgentConfig,
  event: ConditionEvent,
  matched: readonly string[],
  states: readonly string[] = [],
): ConfigEvaluation {
  const situation: ConditionSituation = { states, sparky: config.sparky ?? false };
  let seen = [...matched];
  let goalMet = false;
  if (config.goal) {
    const r = conditionMatches(config.goal, event, seen, 'goal', situation);
    goalMet = r.holds;
    seen = r.matched;
  }
  const any = (conditions: readonly Condition[] | undefined, prefix: string) => {
    let holds = false;
    (conditions ?? []).forEach((condition, i) => {
      const r = conditionMatches(condition, event, seen, `${prefix}${i}`, situation);
      holds ||= r.holds;
      seen = r.matched;
    });
    return holds;
  };
  const stopMatched = any(config.stopFollowUpsOn, STOP_PROGRESS_PREFIX);
  const conversationStopMatched = any(config.stopConversationOn, 'stopConversationOn.');
  return { goalMet, stopMatched, conversationStopMatched, matched: seen };
}
