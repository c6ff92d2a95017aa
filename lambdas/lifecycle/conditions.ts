/**
 * Agent config and condition evaluation: when the agent's goal is met (the lifecycle raises
 * `goal.hit`) and when follow-ups stop (it raises `follow_up.stopped`). Pure.
 *
 * A condition is `{ event, where? }` (the event's type, and tests on keys of its `detail`),
 * `{ anyOf: [...] }` (some member holds for the current event) or `{ allOf: [...] }` (every member
 * held for some event of the current conversation).
 */
import { z } from 'zod';
import { LEAD_EVENT_TYPES, isSystemEventType, type LeadEventType } from './schema.ts';

const Scalar = z.union([z.string(), z.number(), z.boolean()]);

/** Tests on one `detail` field; every operator given must hold. */
const FieldTest = z
  .object({
    /** Strict equality (`null` matches an explicit null, never a missing field). */
    eq: z.union([Scalar, z.null()]),
    /** Numeric comparisons; a numeric string in the event (`"12000"`) counts as its number. */
    gt: z.number(),
    gte: z.number(),
    lt: z.number(),
    lte: z.number(),
    /** A string field: case-insensitive substring (phrase match). An array field: has an element equal to the value. */
    contains: Scalar,
  })
  .partial()
  .strict()
  .refine((t) => Object.keys(t).length > 0, 'name at least one of eq, gt, gte, lt, lte, contains');
export type FieldTest = z.infer<typeof FieldTest>;

const ConditionEventType = z
  .enum(LEAD_EVENT_TYPES)
  .refine((t) => !isSystemEventType(t), 'goal.hit and follow_up.stopped are raised by conditions, they cannot be one');

export interface EventCondition {
  event: LeadEventType;
  where?: Record<string, FieldTest>;
}
export interface AnyOfCondition {
  anyOf: Condition[];
}
export interface AllOfCondition {
  allOf: Condition[];
}
export type Condition = EventCondition | AnyOfCondition | AllOfCondition;

/**
 * One object schema with a refinement rather than a union, so that a mistake deep inside a nested
 * condition is reported at its own path instead of as "no union member matched".
 */
export const ConditionSchema: z.ZodType<Condition> = z.lazy(() =>
  z
    .object({
      event: ConditionEventType.optional(),
      where: z.record(z.string().min(1), FieldTest).optional(),
      anyOf: z.array(ConditionSchema).min(1).optional(),
      allOf: z.array(ConditionSchema).min(1).optional(),
    })
    .strict()
    .superRefine((c, ctx) => {
      const forms = [c.event, c.anyOf, c.allOf].filter((f) => f !== undefined).length;
      if (forms !== 1)
        ctx.addIssue({ code: 'custom', message: 'a condition is exactly one of { event, where? }, { anyOf: [...] }, { allOf: [...] }' });
      else if (c.where && !c.event) ctx.addIssue({ code: 'custom', path: ['where'], message: '`where` belongs beside `event`' });
    })
    .transform((c): Condition => {
      if (c.anyOf) return { anyOf: c.anyOf };
      if (c.allOf) return { allOf: c.allOf };
      return c.where ? { event: c.event!, where: c.where } : { event: c.event! };
    }),
);

/**
 * Per-agent lifecycle config, `statemachines/<lifecycle>/agents/<agent>.json`.
 * Extend it with new optional keys; never change the meaning of these.
 */
export const AgentConfigSchema = z
  .object({
    description: z.string().min(1).optional(),
    /** The agent's true endpoint; `null`: the agent works the lead indefinitely. */
    goal: ConditionSchema.nullable().default(null),
    /** Follow-ups stop (`follow_up.stopped`) when any of these holds. */
    stopFollowUpsOn: z.array(ConditionSchema).default([]),
  })
  .strict();
export type AgentConfig = z.infer<typeof AgentConfigSchema>;

/** The part of an event conditions look at. */
export interface ConditionEvent {
  type: string;
  detail?: Record<string, unknown>;
}

function asNumber(value: unknown): number | undefined {
  if (typeof value === 'number') return value;
  if (typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value))) return Number(value);
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

/** Whether an `{ event, where? }` condition matches one event. */
export function eventMatches(condition: EventCondition, event: ConditionEvent): boolean {
  if (condition.event !== event.type) return false;
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
): ConditionResult {
  if ('event' in condition) return { holds: eventMatches(condition, event), matched: [...matched] };
  let seen = [...matched];
  const members = 'anyOf' in condition ? condition.anyOf : condition.allOf;
  // Every member is evaluated (no short-circuit) so each one's progress is recorded.
  const holds = members.map((member, i) => {
    const r = conditionMatches(member, event, seen, `${path}.${i}`);
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
  matched: string[];
}

/**
 * Check the goal and every stop condition against one event of the current conversation.
 * Progress paths are `goal...` and `stopFollowUpsOn.<i>...`.
 */
export function evaluateAgentConfig(config: AgentConfig, event: ConditionEvent, matched: readonly string[]): ConfigEvaluation {
  let seen = [...matched];
  let goalMet = false;
  if (config.goal) {
    const r = conditionMatches(config.goal, event, seen, 'goal');
    goalMet = r.holds;
    seen = r.matched;
  }
  let stopMatched = false;
  config.stopFollowUpsOn.forEach((condition, i) => {
    const r = conditionMatches(condition, event, seen, `${STOP_PROGRESS_PREFIX}${i}`);
    stopMatched ||= r.holds;
    seen = r.matched;
  });
  return { goalMet, stopMatched, matched: seen };
}
