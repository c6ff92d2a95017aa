/**
 * The lead lifecycle's vocabulary and every shape that crosses a boundary: the statechart file
 * (`statemachines/<lifecycle>/statechart.yaml`), the compiled definition the transition function
 * and the ASL compiler read, and the records the event store persists (events, snapshots, the
 * logged event).
 */
import * as z from 'zod';

/**
 * Every event type a lead's log may hold. Fixed by the issue: EventBridge detail-types, the CLI
 * and the statechart refer to these strings.
 */
export const LEAD_EVENT_TYPES = [
  'agent.message_sent',
  'lead.message_sent',
  'follow_ups.exhausted',
  'follow_up.stopped',
  'link.clicked',
  'callback.received',
  'meeting.booked',
  'meeting.missed',
  'meeting.attended',
  'deal.closed',
  'payment.initiated',
  'payment.completed',
  'renewal.due',
  'lead.opted_out',
  'conversation.stopped',
  'crm.state_set',
  'goal.hit',
] as const;
export type LeadEventType = (typeof LEAD_EVENT_TYPES)[number];

/**
 * Events the transition function raises itself when the agent's config says so. Conditions never
 * name them and are never evaluated against them, so raising one cannot raise another.
 */
export const SYSTEM_EVENT_TYPES = ['follow_up.stopped', 'goal.hit'] as const satisfies readonly LeadEventType[];
export type SystemEventType = (typeof SYSTEM_EVENT_TYPES)[number];

export function isLeadEventType(type: string): type is LeadEventType {
  return (LEAD_EVENT_TYPES as readonly string[]).includes(type);
}

export function isSystemEventType(type: string): type is SystemEventType {
  return (SYSTEM_EVENT_TYPES as readonly string[]).includes(type);
}

/**
 * Context actions a statechart may name (implemented in transition.ts):
 * - `clearFollowUpStop`: `followUpsStopped = false`, and progress towards stop conditions restarts
 *   (a lead who re-engages starts fresh: earlier stopping events do not carry over).
 * - `stopFollowUps`: `followUpsStopped = true`.
 */
export const CONTEXT_ACTIONS = ['clearFollowUpStop', 'stopFollowUps'] as const;
export type ContextAction = (typeof CONTEXT_ACTIONS)[number];

// ---------------------------------------------------------------------------------------------
// The statechart file

/** State names: lowercase snake_case, usable as ASL state names and Mermaid ids. */
export const StateName = z.string().regex(/^[a-z][a-z0-9_]*$/, 'lowercase letters, digits and underscores');

const TransitionObject = z
  .object({
    target: StateName.optional().describe('The leaf to go to.'),
    targetFromDetail: z.string().min(1).optional().describe("Go to the leaf named by this field of the event's `detail` (`crm.state_set`: `state`)."),
    restart: z.literal(true).optional().describe('Only in terminal states: start the next conversation and handle the event as the initial state does.'),
    actions: z.array(z.enum(CONTEXT_ACTIONS)).default([]).describe('Context actions run on the transition.'),
  })
  .strict();

/**
 * `event: target`, `event: { target?, targetFromDetail?, restart?, actions? }`, or `event: null`:
 * not handled here, and the parents are not consulted (the event is only logged).
 */
const TransitionSpec = z.union([StateName, z.null(), TransitionObject]);
export type TransitionSpecFile = z.infer<typeof TransitionSpec>;

export interface StateNodeFile {
  description?: string;
  terminal?: boolean;
  entry?: ContextAction[];
  on?: Record<string, TransitionSpecFile>;
  states?: Record<string, StateNodeFile>;
}

const StateNodeSchema: z.ZodType<StateNodeFile> = z.lazy(() =>
  z
    .object({
      description: z.string().min(1).optional().describe('What the state means.'),
      terminal: z.boolean().optional().describe('Ends the conversation.'),
      entry: z.array(z.enum(CONTEXT_ACTIONS)).optional().describe('Context actions run when the state is entered.'),
      on: z
        .record(z.string(), TransitionSpec)
        .optional()
        .describe('Per event type: a target leaf, `{ target?, targetFromDetail?, restart?, actions? }`, or `null` (logged only, the parents are not consulted).'),
      states: z
        .record(StateName, StateNodeSchema)
        .optional()
        .describe('Children make this a parent (compound) state; a lead is always in exactly one leaf.'),
    })
    .strict(),
).meta({ id: 'state' });

/** `statemachines/<lifecycle>/statechart.yaml` */
export const StatechartFileSchema = z
  .object({
    name: z.string().regex(/^[a-z0-9][a-z0-9-]*$/, 'lowercase letters, digits and dashes').describe('The lifecycle name: equals the folder name.'),
    description: z.string().min(1).describe('What the lifecycle tracks.'),
    version: z.string().min(1).describe('The definition version.'),
    initial: StateName.describe('The leaf every conversation starts in.'),
    on: z
      .record(z.string(), TransitionSpec)
      .default({})
      .describe('Machine-level transitions: they apply in every state that does not handle the event itself.'),
    states: z.record(StateName, StateNodeSchema).describe('The states, nested: a state with `states` is a parent.'),
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
  | { kind: 'fromDetail'; field: string; actions: ContextAction[] }
  /** Start the next conversation and take the initial state's transition for this event. */
  | { kind: 'restart' };

/** A transition a leaf responds to, with the state that declares it (`null`: the machine level). */
export interface ResolvedTransition {
  declaredIn: string | null;
  transition: Transition;
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
  /** Transitions declared on this state; `null` = not handled here and not inherited. */
  on: Partial<Record<LeadEventType, Transition | null>>;
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
  initial: string;
  /** Machine-level transitions, as declared. */
  on: Partial<Record<LeadEventType, Transition | null>>;
  /** Every state (parents and leaves) by name, in document order, parents before children. */
  states: Record<string, StateNode>;
  /** Top-level state names in document order. */
  roots: string[];
  /** Leaf names in document order. */
  leaves: string[];
  handlers: Record<string, Partial<Record<LeadEventType, ResolvedTransition>>>;
}

// ---------------------------------------------------------------------------------------------
// Runtime records

/**
 * An event about a lead, as it arrives (EventBridge detail, CLI, ASL task input). Any `type`
 * string parses: an unknown type is logged with a refusal, never thrown.
 */
export const LifecycleEventSchema = z.object({
  /** Unique per event; redeliveries carry the same id (callers dedup on it). */
  id: z.string().min(1),
  leadId: z.string().min(1),
  type: z.string().min(1),
  time: z.iso.datetime({ offset: true }),
  detail: z.record(z.string(), z.unknown()).optional(),
});
export type LifecycleEvent = z.infer<typeof LifecycleEventSchema>;

export const LeadContextSchema = z.object({ followUpsStopped: z.boolean() }).strict();
export type LeadContext = z.infer<typeof LeadContextSchema>;

/** A lead's projection: the state record the event store keeps beside the log. */
export const LeadSnapshotSchema = z
  .object({
    /** Always a leaf. */
    state: StateName,
    context: LeadContextSchema,
    /** Applied transitions so far, over every conversation (see README: Versions). */
    version: z.number().int().nonnegative(),
    /** 1 for the first conversation; leaving a terminal state starts the next one. */
    conversation: z.number().int().positive(),
    /** Events logged so far, over every conversation, system-raised ones included; the `seq` of the last one. */
    eventCount: z.number().int().nonnegative(),
    progress: z
      .object({
        /** Condition members (paths like `goal.1`) that matched an earlier event of this conversation; `allOf` needs them. */
        matched: z.array(z.string()),
      })
      .strict(),
    /** The CRM's own time of the newest `crm.state_set` applied (`detail.crmUpdatedAt`): an older one is refused. */
    crmUpdatedAt: z.iso.datetime({ offset: true }).optional(),
  })
  .strict();
export type LeadSnapshot = z.infer<typeof LeadSnapshotSchema>;

/** What the transition function did, in order. Context actions have already been applied to the snapshot. */
export const LifecycleActionSchema = z.union([
  z.object({ type: z.enum(CONTEXT_ACTIONS) }).strict(),
  z.object({ type: z.literal('startConversation'), conversation: z.number().int().positive() }).strict(),
  /** The event could not be applied (unknown type, invalid `crm.state_set` target); it is still logged. */
  z.object({ type: z.literal('refuse'), reason: z.string() }).strict(),
]);
export type LifecycleAction = z.infer<typeof LifecycleActionSchema>;

/** One entry of a lead's append-only log: exactly what the event store persists. */
export const LoggedEventSchema = z
  .object({
    id: z.string().min(1),
    leadId: z.string().min(1),
    /** Position in the lead's log, from 1, contiguous across conversations. */
    seq: z.number().int().positive(),
    type: z.string().min(1),
    time: z.iso.datetime({ offset: true }),
    /** The conversation the event belongs to (an event that starts conversation N+1 belongs to N+1). */
    conversation: z.number().int().positive(),
    detail: z.record(z.string(), z.unknown()).optional(),
    stateBefore: StateName,
    stateAfter: StateName,
    actions: z.array(LifecycleActionSchema),
  })
  .strict();
export type LoggedEvent = z.infer<typeof LoggedEventSchema>;
