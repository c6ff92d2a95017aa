/**
 * Agent config and condition evaluation: when the agent's goal is met (the lifecycle raises
 * `goal.hit`) and when follow-ups stop (it raises `follow_up.stopped`). Pure.
 *
 * A condition is `{ event, where? }` (the event's type, and tests on keys of its `detail`),
 * `{ state, sparky? }` (where the event left the entity, and the agent's Sparky switch),
 * `{ anyOf: [...] }` (some member holds for the current event) or `{ allOf: [...] }` (every member
 * held for some event of the current conversation). `event`/`where` and `state`/`sparky` may be
 * combined: every part given must hold.
 */
import * as z from 'zod';
import { EventType, isSystemEventType } from './schema.ts';
import { NO_TIMERS, TimersSchema } from './timers-config.ts';

const Scalar = z.union([z.string(), z.number(), z.boolean()]);

/** Tests on one `detail` field; every operator given must hold. */
const FieldTest = z
  .object({
    eq: z.union([Scalar, z.null()]).describe('Strict equality (`null` matches an explicit null, never a missing field).'),
    gt: z.number().describe('Greater than; a decimal string in the event (`"12000"`, `"-1.5"`) counts as its number, nothing else does.'),
    gte: z.number().describe('Greater than or equal.'),
    lt: z.number().describe('Less than.'),
    lte: z.number().describe('Less than or equal.'),
    contains: Scalar.describe('A string field: case-insensitive substring (phrase match). An array field: has an element equal to the value.'),
  })
  .partial()
  .strict()
  .refine((t) => Object.keys(t).length > 0, 'name at least one of eq, gt, gte, lt, lte, contains');
export type FieldTest = z.infer<typeof FieldTest>;

/** An event type; whether the lifecycle knows it is checked against its vocabulary (`checkAgentConfig`). */
const ConditionEventType = EventType.refine((t) => !isSystemEventType(t), 'goal.hit and follow_up.stopped are raised by conditions, they cannot be one');

export interface EventCondition {
  event?: string;
  where?: Record<string, FieldTest>;
  /** The entity's state after the event: a leaf, or a parent (any leaf inside it). */
  state?: string;
  /** The agent's `sparky` switch (revival of cold entities) must be this. */
  sparky?: boolean;
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
      event: ConditionEventType.optional().describe('The event\'s type.'),
      where: z.record(z.string().min(1), FieldTest).optional().describe('Tests on keys of the event\'s `detail`, beside `event`.'),
      state: z.string().regex(/^[a-z][a-z0-9_]*$/, 'a state name').optional().describe('Where the event left the lead: a leaf, or a parent (any leaf inside it).'),
      sparky: z.boolean().optional().describe('The agent\'s `sparky` switch must be this.'),
      anyOf: z.array(ConditionSchema).min(1).optional().describe('Some member holds for the current event.'),
      allOf: z.array(ConditionSchema).min(1).optional().describe('Every member held for some event of the current conversation.'),
    })
    .strict()
    .superRefine((c, ctx) => {
      const leaf = c.event !== undefined || c.state !== undefined;
      const forms = [leaf || undefined, c.anyOf, c.allOf].filter((f) => f !== undefined).length;
      if (forms !== 1)
        ctx.addIssue({ code: 'custom', message: 'a condition is exactly one of { event?, where?, state?, sparky? }, { anyOf: [...] }, { allOf: [...] }' });
      else if (c.where && !c.event) ctx.addIssue({ code: 'custom', path: ['where'], message: '`where` belongs beside `event`' });
      else if (c.sparky !== undefined && !leaf) ctx.addIssue({ code: 'custom', path: ['sparky'], message: '`sparky` belongs beside `event` or `state`' });
    })
    .transform((c): Condition => {
      if (c.anyOf) return { anyOf: c.anyOf };
      if (c.allOf) return { allOf: c.allOf };
      return {
        ...(c.event !== undefined && { event: c.event }),
        ...(c.where && { where: c.where }),
        ...(c.state !== undefined && { state: c.state }),
        ...(c.sparky !== undefined && { sparky: c.sparky }),
      };
    }),
).meta({ id: 'condition' });

/**
 * Per-agent lifecycle config, `statemachines/<lifecycle>/agents/<agent>.json`.
 * Extend it with new optional keys; never change the meaning of these.
 */
export const AgentConfigSchema = z
  .object({
    $schema: z.string().optional().describe('The JSON Schema an editor checks the file with (`docs/schemas/agent-config.schema.json`); ignored by Stepwise.'),
    description: z.string().min(1).optional().describe('What the agent does.'),
    goal: ConditionSchema.nullable().default(null).describe("The agent's true endpoint (the lifecycle raises `goal.hit`); `null`: the agent works the entity indefinitely."),
    stopFollowUpsOn: z.array(ConditionSchema).default([]).describe('Follow-ups stop (`follow_up.stopped`) when any of these holds.'),
    stopConversationOn: z
      .array(ConditionSchema)
      .default([])
      .describe('The conversation ends without its goal (`conversation.stopped`) when any of these holds, e.g. `{ "state": "cold", "sparky": false }`.'),
    sparky: z.boolean().default(false).describe('Sparky: the agent may revive cold entities. Conditions test it with `sparky`.'),
    timers: TimersSchema.default(NO_TIMERS).describe("What raises time-based events for this agent's entities."),
  })
  .strict()
  // `$schema` is for editors: the config itself has no such field.
  .transform(({ $schema: _, ...config }) => config)
  .meta({ title: 'agent config' });
type ParsedAgentConfig = z.infer<typeof AgentConfigSchema>;
/** An agent config; the keys added after the first release are optional, so configs written before them stay valid values. */
export type AgentConfig = Omit<ParsedAgentConfig, 'stopConversationOn' | 'sparky' | 'timers'> &
  Partial<Pick<ParsedAgentConfig, 'stopConversationOn' | 'sparky' | 'timers'>>;

/** The part of an event conditions look at. */
export interface ConditionEvent {
  type: string;
  detail?: Record<string, unknown>;
}

/** What a `{ state, sparky }` condition looks at: where the event left the entity (its leaf and the leaf's parents) and the agent's switch. */
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
export function eventMatches(condition: EventCondition, event: ConditionEvent, situation?: ConditionSituation): boolean {
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
  if (!('anyOf' in condition) && !('allOf' in condition)) return { holds: eventMatches(condition, event, situation), matched: [...matched] };
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
export function evaluateAgentConfig(config: AgentConfig, event: ConditionEvent, matched: readonly string[], states: readonly string[] = []): ConfigEvaluation {
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
