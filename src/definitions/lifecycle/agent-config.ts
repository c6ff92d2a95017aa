/**
 * A lifecycle's agent config (`statemachines/<lifecycle>/agents/<agent>.json`) and the conditions
 * it is written in: when the agent's goal is met, when follow-ups and the conversation stop. What
 * the conditions mean when an event arrives is src/runtime/lifecycle/conditions.ts.
 *
 * A condition is `{ event, where? }` (the event's type, and tests on keys of its `detail`),
 * `{ state, sparky? }` (where the event left the entity, and the agent's Sparky switch),
 * `{ anyOf: [...] }` (some member holds for the current event) or `{ allOf: [...] }` (every member
 * held for some event of the current conversation). `event`/`where` and `state`/`sparky` may be
 * combined: every part given must hold.
 */
import * as z from 'zod';
import { EventType, isSystemEventType, ReportSchema } from './schema.ts';
import { NO_TIMERS, TimersSchema } from './timers-config.ts';

const Scalar = z.union([z.string(), z.number(), z.boolean()]);

/** Tests on one `detail` field; every operator given must hold. */
const FieldTest = z
  .object({
    eq: z
      .union([Scalar, z.null()])
      .describe('Strict equality (`null` matches an explicit null, never a missing field).'),
    gt: z
      .number()
      .describe(
        'Greater than; a decimal string in the event (`"12000"`, `"-1.5"`) counts as its number, nothing else does.',
      ),
    gte: z.number().describe('Greater than or equal.'),
    lt: z.number().describe('Less than.'),
    lte: z.number().describe('Less than or equal.'),
    contains: Scalar.describe(
      'A string field: case-insensitive substring (phrase match). An array field: has an element equal to the value.',
    ),
  })
  .partial()
  .strict()
  .refine((t) => Object.keys(t).length > 0, 'name at least one of eq, gt, gte, lt, lte, contains');
export type FieldTest = z.infer<typeof FieldTest>;

/** An event type; whether the lifecycle knows it is checked against its vocabulary (`checkAgentConfig`). */
const ConditionEventType = EventType.refine(
  (t) => !isSystemEventType(t),
  'goal.hit and follow_up.stopped are raised by conditions, they cannot be one',
);

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
export const ConditionSchema: z.ZodType<Condition> = z
  .lazy(() =>
    z
      .object({
        event: ConditionEventType.optional().describe("The event's type."),
        where: z
          .record(z.string().min(1), FieldTest)
          .optional()
          .describe("Tests on keys of the event's `detail`, beside `event`."),
        state: z
          .string()
          .regex(/^[a-z][a-z0-9_]*$/, 'a state name')
          .optional()
          .describe('Where the event left the lead: a leaf, or a parent (any leaf inside it).'),
        sparky: z.boolean().optional().describe("The agent's `sparky` switch must be this."),
        anyOf: z.array(ConditionSchema).min(1).optional().describe('Some member holds for the current event.'),
        allOf: z
          .array(ConditionSchema)
          .min(1)
          .optional()
          .describe('Every member held for some event of the current conversation.'),
      })
      .strict()
      .superRefine((c, ctx) => {
        const leaf = c.event !== undefined || c.state !== undefined;
        const forms = [leaf || undefined, c.anyOf, c.allOf].filter((f) => f !== undefined).length;
        if (forms !== 1)
          ctx.addIssue({
            code: 'custom',
            message:
              'a condition is exactly one of { event?, where?, state?, sparky? }, { anyOf: [...] }, { allOf: [...] }',
          });
        else if (c.where && !c.event)
          ctx.addIssue({ code: 'custom', path: ['where'], message: '`where` belongs beside `event`' });
        else if (c.sparky !== undefined && !leaf)
          ctx.addIssue({ code: 'custom', path: ['sparky'], message: '`sparky` belongs beside `event` or `state`' });
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
  )
  .meta({ id: 'condition' });

/**
 * Per-agent lifecycle config, `statemachines/<lifecycle>/agents/<agent>.json`.
 * Extend it with new optional keys; never change the meaning of these.
 */
export const AgentConfigSchema = z
  .object({
    $schema: z
      .string()
      .optional()
      .describe(
        'The JSON Schema an editor checks the file with (`docs/schemas/agent-config.schema.json`); ignored by Stepwise.',
      ),
    description: z.string().min(1).optional().describe('What the agent does.'),
    goal: ConditionSchema.nullable()
      .default(null)
      .describe(
        "The agent's true endpoint (the lifecycle raises `goal.hit`); `null`: the agent works the entity indefinitely.",
      ),
    stopFollowUpsOn: z
      .array(ConditionSchema)
      .default([])
      .describe('Follow-ups stop (`follow_up.stopped`) when any of these holds.'),
    stopConversationOn: z
      .array(ConditionSchema)
      .default([])
      .describe(
        'The conversation ends without its goal (`conversation.stopped`) when any of these holds, e.g. `{ "state": "cold", "sparky": false }`.',
      ),
    sparky: z
      .boolean()
      .default(false)
      .describe('Sparky: the agent may revive cold entities. Conditions test it with `sparky`.'),
    timers: TimersSchema.default(NO_TIMERS).describe("What raises time-based events for this agent's entities."),
    reports: z
      .record(z.string().regex(/^[a-zA-Z][a-zA-Z0-9]*$/, 'camelCase'), ReportSchema)
      .default({})
      .describe(
        "The agent's own reports, in the statechart's report forms: `stepwise lifecycle <name> report --agent <agent>` shows them, with its goal rate, beside the statechart's.",
      ),
  })
  .strict()
  // `$schema` is for editors: the config itself has no such field.
  .transform(({ $schema: _, ...config }) => config)
  .meta({ title: 'agent config' });
type ParsedAgentConfig = z.infer<typeof AgentConfigSchema>;
/**
 * An agent config; the keys added after the first release are optional, so configs written before them stay valid
 * values.
 */
export type AgentConfig = Omit<ParsedAgentConfig, 'stopConversationOn' | 'sparky' | 'timers' | 'reports'> &
  Partial<Pick<ParsedAgentConfig, 'stopConversationOn' | 'sparky' | 'timers' | 'reports'>>;
