/**
 * A lifecycle's vocabulary and every shape that crosses a boundary: the statechart file
 * (`statemachines/<lifecycle>/statechart.yaml`), the compiled definition the transition function
 * and the ASL compiler read, and the records the event store persists (events, snapshots, the
 * logged event).
 *
 * What every lifecycle has: states, events about one entity (its id under the key `entity.key` of
 * an EventBridge event's detail), the event store, the routing Express workflow and the outbox.
 * What a statechart opts into (`features`): agent goals, follow-ups, renewals, CRM sync and
 * notifications, each with the events and states it names.
 */
import * as z from 'zod';
import { JsonObjectSchema } from '../../core/dynamo-json.ts';

/** Raised by the `goals` feature when the agent's goal is met; it must end the conversation. */
export const GOAL_HIT = 'goal.hit';
/** Raised by the `goals` feature when a conversation stop of the agent holds. */
export const CONVERSATION_STOPPED = 'conversation.stopped';
/** Raised by the `followUps` feature when a follow-up stop of the agent holds. */
export const FOLLOW_UP_STOPPED = 'follow_up.stopped';

/**
 * Events the transition function raises itself when the agent's config says so. Conditions never
 * name them and are never evaluated against them, so raising one cannot raise another.
 */
export const SYSTEM_EVENT_TYPES = [FOLLOW_UP_STOPPED, GOAL_HIT] as const;

export function isSystemEventType(type: string): boolean {
  return (SYSTEM_EVENT_TYPES as readonly string[]).includes(type);
}

/**
 * Context actions a statechart may name (implemented in transition.ts), with the `followUps` feature:
 * - `clearFollowUpStop`: `followUpsStopped = false`, and progress towards stop conditions restarts
 *   (an entity that re-engages starts fresh: earlier stopping events do not carry over).
 * - `stopFollowUps`: `followUpsStopped = true`.
 */
export const CONTEXT_ACTIONS = ['clearFollowUpStop', 'stopFollowUps'] as const;
export type ContextAction = (typeof CONTEXT_ACTIONS)[number];

// ---------------------------------------------------------------------------------------------
// The statechart file

/** State names: lowercase snake_case, usable as ASL state names and Mermaid ids. */
export const StateName = z.string().regex(/^[a-z][a-z0-9_]*$/, 'lowercase letters, digits and underscores');
/** Event types: dotted lowercase words (`order.paid`), usable as EventBridge detail-types and ASL state names. */
export const EventType = z
  .string()
  .regex(/^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*$/, 'dotted lowercase words, e.g. order.paid')
  .max(64);

const TransitionObject = z
  .object({
    target: StateName.optional().describe('The leaf to go to.'),
    targetFromDetail: z
      .string()
      .min(1)
      .optional()
      .describe("Go to the leaf named by this field of the event's `detail` (an external system placing the entity)."),
    versionFrom: z
      .string()
      .min(1)
      .optional()
      .describe(
        "With `targetFromDetail`: the detail field holding the entity version the placement is based on; a placement older than the entity's version is refused (a late echo never moves it back).",
      ),
    timeFrom: z
      .string()
      .min(1)
      .optional()
      .describe(
        "With `targetFromDetail`: the detail field holding the external system's own ISO time of the placement; one older than the newest placement applied is refused (it arrived out of order).",
      ),
    restart: z
      .literal(true)
      .optional()
      .describe('Only in terminal states: start the next conversation and handle the event as the initial state does.'),
    actions: z.array(z.enum(CONTEXT_ACTIONS)).default([]).describe('Context actions run on the transition.'),
  })
  .strict();

/**
 * `event: target`, `event: { target?, targetFromDetail?, restart?, actions? }`, or `event: null`:
 * not handled here, and the parents are not consulted (the event is only logged).
 */
const TransitionSpec = z.union([StateName, z.null(), TransitionObject]);
export type TransitionSpecFile = z.infer<typeof TransitionSpec>;

/**
 * A delay of a delayed transition (`after`): a duration (`30s`, `90m`, `36h`, `14d`, `2w`), or
 * `detail.<field>`, read from that field of the event that brought the entity into the state.
 */
export const DELAY_PATTERN = /^([1-9][0-9]{0,5}[smhdw]|detail\.[A-Za-z][A-Za-z0-9_]*)$/;
/** A duration alone: what `detail.<field>` must hold. */
export const DURATION_PATTERN = /^([1-9][0-9]{0,5})([smhdw])$/;
const DelayKey = z.string().regex(DELAY_PATTERN, 'a duration like 30s, 90m, 36h, 14d, 2w, or detail.<field>');

/** `delay: target`, or `delay: { target, actions? }`. */
const AfterSpec = z.union([
  StateName,
  z
    .object({
      target: StateName.describe('The leaf to go to when the delay has passed.'),
      actions: z.array(z.enum(CONTEXT_ACTIONS)).default([]).describe('Context actions run on the transition.'),
    })
    .strict(),
]);
export type AfterSpecFile = z.infer<typeof AfterSpec>;

export interface StateNodeFile {
  description?: string;
  terminal?: boolean;
  entry?: ContextAction[];
  on?: Record<string, TransitionSpecFile>;
  after?: Record<string, AfterSpecFile>;
  states?: Record<string, StateNodeFile>;
}

const StateNodeSchema: z.ZodType<StateNodeFile> = z
  .lazy(() =>
    z
      .object({
        description: z.string().min(1).optional().describe('What the state means.'),
        terminal: z.boolean().optional().describe('Ends the conversation.'),
        entry: z.array(z.enum(CONTEXT_ACTIONS)).optional().describe('Context actions run when the state is entered.'),
        on: z
          .record(z.string(), TransitionSpec)
          .optional()
          .describe(
            'Per event type: a target leaf, `{ target?, targetFromDetail?, versionFrom?, timeFrom?, restart?, actions? }`, or `null` (logged only, the parents are not consulted).',
          ),
        after: z
          .record(DelayKey, AfterSpec)
          .optional()
          .describe(
            "Delayed transitions: per delay (`14d`, `36h`, or `detail.<field>`: a duration in that field of the event that entered the state), a target leaf or `{ target, actions? }`. The timer starts when the state is entered and is cancelled when it is left; moving between a parent's children keeps the parent's timers.",
          ),
        states: z
          .record(StateName, StateNodeSchema)
          .optional()
          .describe('Children make this a parent (compound) state; an entity is always in exactly one leaf.'),
      })
      .strict(),
  )
  .meta({ id: 'state' });

/** What the lifecycle's events are about. */
const EntitySchema = z
  .object({
    key: z
      .string()
      .regex(/^[A-Za-z][A-Za-z0-9_]*$/, 'a field name: letters, digits and underscores')
      .refine((k) => k !== 'eventId', "`eventId` is the envelope's own field")
      .default('entityId')
      .describe(
        'The `detail` field of an EventBridge event (and the field of a replay line) that holds the entity id.',
      ),
    name: z
      .string()
      .regex(/^[a-z][a-z0-9_]*$/, 'lowercase letters, digits and underscores')
      .optional()
      .describe(
        "What one entity is called: `<name>.state_changed` is what the lifecycle publishes, `<name>s` labels the CLI's output. Default: the key without its `Id` suffix (`leadId` → `lead`), else `entity`.",
      ),
  })
  .strict();

/** The opt-in features of a lifecycle; each names the events and states it works with. */
const FeaturesSchema = z
  .object({
    goals: z
      .boolean()
      .default(false)
      .describe(
        "Agent goals: the agent's `goal` and `stopConversationOn` are checked after every event; a met goal raises `goal.hit` (every non-terminal leaf must handle it, ending the conversation), a conversation stop raises `conversation.stopped`.",
      ),
    followUps: z
      .object({
        states: z.array(StateName).min(1).describe('The states in which follow-ups go out.'),
        sent: EventType.describe('The event the follow-up sender logs after each follow-up.'),
        reply: EventType.describe('The event that restarts the chain (the entity replied).'),
        exhausted: EventType.describe('The event applied after the last follow-up without a reply.'),
      })
      .strict()
      .optional()
      .describe(
        "Follow-ups: the entity's context gets `followUpsStopped`, the context actions may be used, the agent's `stopFollowUpsOn` raises `follow_up.stopped` (every non-terminal leaf must handle it), and the agent's follow-up timers run.",
      ),
    renewals: z
      .object({
        state: StateName.describe('Entering it sets the renewal timer.'),
        event: EventType.describe('The event the timer applies.'),
      })
      .strict()
      .optional()
      .describe("Renewals: entering `state` sets a timer that applies `event` after the agent's `renewalAfterDays`."),
    crmSync: z
      .boolean()
      .default(false)
      .describe(
        "A listener writes every state change to the environment's CRM webhook (`crmWebhookUrl` of the lifecycle's settings).",
      ),
    notify: z
      .object({ states: z.array(StateName).min(1).describe('Entering one of these notifies the team.') })
      .strict()
      .optional()
      .describe(
        "A listener emails the team (`notifyEmail` of the lifecycle's settings) when an entity enters one of `states`.",
      ),
  })
  .strict();
export type LifecycleFeatures = z.infer<typeof FeaturesSchema>;

/**
 * One report over the event log (`stepwise lifecycle <name> report`), `label` heading its line.
 * Exactly one form: `count` (events of a type, in total and per entity); `rate` of one type `of`
 * another; the time `from` an entity's first event of one type `to` its first of another after it;
 * the entities that logged `event` while `in` a state.
 */
export const ReportSchema = z
  .object({
    label: z.string().min(1).describe("The report line's heading."),
    count: EventType.optional().describe('Count this event type, in total and per entity.'),
    rate: EventType.optional().describe(
      'With `of`: the share of entities with this event among those with the `of` event.',
    ),
    of: EventType.optional().describe('With `rate`: the event the rate is over.'),
    from: EventType.optional().describe("With `to`: the time from an entity's first event of this type..."),
    to: EventType.optional().describe('...to its first event of this type after it.'),
    event: EventType.optional().describe('With `in`: the entities that logged this event...'),
    in: StateName.optional().describe('...while in this state.'),
  })
  .strict()
  .superRefine((r, ctx) => {
    const forms = [
      r.count !== undefined,
      r.rate !== undefined || r.of !== undefined,
      r.from !== undefined || r.to !== undefined,
      r.event !== undefined || r.in !== undefined,
    ];
    const form = 'a report is exactly one of { count }, { rate, of }, { from, to }, { event, in }';
    if (forms.filter(Boolean).length !== 1) return void ctx.addIssue({ code: 'custom', message: form });
    const pairs: [unknown, unknown][] = [
      [r.rate, r.of],
      [r.from, r.to],
      [r.event, r.in],
    ];
    if (pairs.some(([a, b]) => (a === undefined) !== (b === undefined)))
      ctx.addIssue({ code: 'custom', message: form });
  });
export type ReportFile = z.infer<typeof ReportSchema>;

/** `statemachines/<lifecycle>/statechart.yaml` */
export const StatechartFileSchema = z
  .object({
    name: z
      .string()
      .regex(/^[a-z0-9][a-z0-9-]*$/, 'lowercase letters, digits and dashes')
      .describe('The lifecycle name: equals the folder name.'),
    description: z.string().min(1).describe('What the lifecycle tracks.'),
    version: z.string().min(1).describe('The definition version.'),
    entity: EntitySchema.default({ key: 'entityId' }).describe(
      'What the lifecycle tracks: the `detail` field naming it (`key`) and the word for it (`name`, for messages and the published `<name>.state_changed`).',
    ),
    sources: z
      .array(
        z
          .string()
          .min(1)
          .max(256)
          .regex(/^(?!stepwise\.lifecycle$)/, 'stepwise.lifecycle is what the lifecycle publishes'),
      )
      .default([])
      .describe(
        'EventBridge sources whose events the lifecycle applies, besides `stepwise.replay` (the CLI) and, with timers, `stepwise.scheduler`.',
      ),
    events: z
      .array(EventType)
      .min(1)
      .optional()
      .describe(
        'The event types the lifecycle knows; any other is logged with a refusal. Default: every event a transition or a feature names.',
      ),
    features: FeaturesSchema.default({ goals: false, crmSync: false }).describe(
      'What the lifecycle opts into: goals, follow-ups, renewals, CRM sync, notifications.',
    ),
    initial: StateName.describe('The leaf every conversation starts in.'),
    on: z
      .record(z.string(), TransitionSpec)
      .default({})
      .describe('Machine-level transitions: they apply in every state that does not handle the event itself.'),
    states: z.record(StateName, StateNodeSchema).describe('The states, nested: a state with `states` is a parent.'),
    reports: z
      .record(z.string().regex(/^[a-z][A-Za-z0-9]*$/, 'a camelCase key'), ReportSchema)
      .default({})
      .describe(
        'Reports over the event log, by the key they appear under in the report: a count, a rate, a time between two events, or the entities in a state.',
      ),
  })
  .strict()
  .meta({ title: 'statechart.yaml' });
export type StatechartFile = z.infer<typeof StatechartFileSchema>;

// ---------------------------------------------------------------------------------------------
// The compiled definition

/** A declared transition, normalised. */
export type Transition =
  /** Go to a leaf; run `actions`, then the entry actions of the states entered. */
  | { kind: 'goto'; target: string; actions: ContextAction[] }
  /** Stay in the current leaf (no exit, no entry) and run `actions`. */
  | { kind: 'stay'; actions: ContextAction[] }
  /** Like `goto`, with the target read from `detail[field]`; an invalid target is refused (logged, never thrown). */
  | { kind: 'fromDetail'; field: string; actions: ContextAction[]; versionFrom?: string; timeFrom?: string }
  /** Start the next conversation and take the initial state's transition for this event. */
  | { kind: 'restart' };

/** A transition a leaf responds to, with the state that declares it (`null`: the machine level). */
export interface ResolvedTransition {
  declaredIn: string | null;
  transition: Transition;
}

/**
 * A delayed transition (`after` in the file): when the entity has stayed `delay` in the declaring
 * state, its timer applies the event `type` (`after.<state>.<delay>`), which only this state handles.
 */
export interface DelayedTransition {
  /** The delay as written: `14d`, `detail.refundWindow`. */
  key: string;
  /** The event the timer applies; the transition Task of the lifecycle's state machine is named by it. */
  type: string;
  /** A fixed duration, or the detail field of the entering event that holds one. */
  delay: { ms: number } | { field: string };
  transition: Extract<Transition, { kind: 'goto' }>;
}

export interface StateNode {
  name: string;
  /** Dotted path from the root, e.g. `active.lead_qualification.engaged`. */
  path: string;
  parent: string | null;
  /** Child state names in document order; empty for a leaf. */
  children: string[];
  terminal: boolean;
  entry: ContextAction[];
  /** Transitions declared on this state, by event type; `null` = not handled here and not inherited. */
  on: Record<string, Transition | null>;
  /** Delayed transitions declared on this state, in document order. */
  after: DelayedTransition[];
  description?: string;
}

/**
 * A loaded, validated statechart. `handlers` is what a compiler needs: for every leaf, every event
 * it responds to (declared on the leaf or inherited from a parent or the machine level; the
 * deepest declaration wins) and what happens. An event missing from a leaf's handlers is only
 * logged there. A `goto` to the leaf itself is resolved as no transition (or as `stay` when it
 * carries actions), so every `goto` in `handlers` changes the state.
 */
export interface LifecycleDefinition {
  name: string;
  description: string;
  version: string;
  /** The statechart file, relative to the working directory. */
  file: string;
  /** The detail field with the entity id (`key`), what one entity is called and several (`name`, `plural`). */
  entity: { key: string; name: string; plural: string };
  /**
   * EventBridge sources whose events the lifecycle applies: the declared ones, `stepwise.replay`, and
   * `stepwise.scheduler` with timers.
   */
  sources: string[];
  /** Every event type the lifecycle knows (declared, or derived from the transitions and features), in order. */
  events: string[];
  features: LifecycleFeatures;
  reports: Record<string, ReportFile>;
  initial: string;
  /** Machine-level transitions, as declared. */
  on: Record<string, Transition | null>;
  /** Every state (parents and leaves) by name, in document order, parents before children. */
  states: Record<string, StateNode>;
  /** Top-level state names in document order. */
  roots: string[];
  /** Leaf names in document order. */
  leaves: string[];
  /** Per leaf, per event type it responds to (own keys only: read them with `handlerOf`). */
  handlers: Record<string, Record<string, ResolvedTransition>>;
}

/** What `leaf` does with an event of `type`, if anything (`type` is data: never a prototype key). */
export function handlerOf(def: LifecycleDefinition, leaf: string, type: string): ResolvedTransition | undefined {
  const table = Object.hasOwn(def.handlers, leaf) ? def.handlers[leaf]! : undefined;
  return table && Object.hasOwn(table, type) ? table[type] : undefined;
}

/** Whether `type` is in the lifecycle's vocabulary. */
export function knowsEvent(def: LifecycleDefinition, type: string): boolean {
  return def.events.includes(type);
}

// ---------------------------------------------------------------------------------------------
// Runtime records

/**
 * An event about an entity, as the engine handles it (from the EventBridge envelope, a replay
 * line, an ASL task input). Any `type` string parses: an unknown type is logged with a refusal,
 * never thrown.
 */
export const LifecycleEventSchema = z.object({
  /** Unique per event; redeliveries carry the same id (callers dedup on it). */
  id: z.string().min(1),
  /** The entity the event is about (the detail field `entity.key` of the envelope). */
  entityId: z.string().min(1),
  type: z.string().min(1),
  time: z.iso.datetime({ offset: true }),
  /** Any JSON object, kept as it came. */
  detail: JsonObjectSchema.optional(),
});
export type LifecycleEvent = z.infer<typeof LifecycleEventSchema>;

/** What the context actions set; `followUpsStopped` only with the `followUps` feature. */
export const EntityContextSchema = z.object({ followUpsStopped: z.boolean().optional() }).strict();
export type EntityContext = z.infer<typeof EntityContextSchema>;

/** An entity's projection: the state record the event store keeps beside the log. */
export const EntitySnapshotSchema = z
  .object({
    /** Always a leaf. */
    state: StateName,
    context: EntityContextSchema,
    /** Applied transitions so far, over every conversation (see README: Versions). */
    version: z.number().int().nonnegative(),
    /** 1 for the first conversation; leaving a terminal state starts the next one. */
    conversation: z.number().int().positive(),
    /** Events logged so far, over every conversation, system-raised ones included; the `seq` of the last one. */
    eventCount: z.number().int().nonnegative(),
    progress: z
      .object({
        /**
         * Condition members (paths like `goal.1`) that matched an earlier event of this conversation; `allOf` needs
         * them.
         */
        matched: z.array(z.string()),
      })
      .strict(),
    /**
     * The external system's own time of the newest placement applied (a `targetFromDetail` with `timeFrom`): an older
     * one is refused.
     */
    placedAt: z.iso.datetime({ offset: true }).optional(),
  })
  .strict();
export type EntitySnapshot = z.infer<typeof EntitySnapshotSchema>;

/** What the transition function did, in order. Context actions have already been applied to the snapshot. */
export const LifecycleActionSchema = z.union([
  z.object({ type: z.enum(CONTEXT_ACTIONS) }).strict(),
  z.object({ type: z.literal('startConversation'), conversation: z.number().int().positive() }).strict(),
  /** The event could not be applied (unknown type, invalid `targetFromDetail` target, stale); it is still logged. */
  z.object({ type: z.literal('refuse'), reason: z.string() }).strict(),
]);
export type LifecycleAction = z.infer<typeof LifecycleActionSchema>;

/** One entry of an entity's append-only log: exactly what the event store persists. */
export const LoggedEventSchema = z
  .object({
    id: z.string().min(1),
    entityId: z.string().min(1),
    /** Position in the entity's log, from 1, contiguous across conversations. */
    seq: z.number().int().positive(),
    type: z.string().min(1),
    time: z.iso.datetime({ offset: true }),
    /** The conversation the event belongs to (an event that starts conversation N+1 belongs to N+1). */
    conversation: z.number().int().positive(),
    detail: JsonObjectSchema.optional(),
    stateBefore: StateName,
    stateAfter: StateName,
    actions: z.array(LifecycleActionSchema),
  })
  .strict();
export type LoggedEvent = z.infer<typeof LoggedEventSchema>;

/** Where replayed events come from (`stepwise lifecycle <name> replay`): every lifecycle applies them. */
export const REPLAY_SOURCE = 'stepwise.replay';
/**
 * What EventBridge Scheduler and the follow-up sender put on the bus for an entity's timers: lifecycles with timers
 * apply them.
 */
export const SCHEDULER_SOURCE = 'stepwise.scheduler';
/** The source of what the lifecycle itself publishes; never routed back into it. */
export const LIFECYCLE_SOURCE = 'stepwise.lifecycle';
