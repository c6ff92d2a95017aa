/**
 * `lead.state_changed`: what the lifecycle publishes after an applied event changed a lead's
 * state or context, and what each listener makes of it (the CRM update, the notification, the
 * follow-up to schedule). Pure: the listener handlers parse, call one of these, and hand the
 * result to their port.
 */
import * as z from 'zod';
import { InvalidInputError } from '../lib/errors.ts';
import { EventBridgeEnvelopeSchema, LIFECYCLE_SOURCE, STATE_CHANGED } from './envelope.ts';
import { LeadContextSchema, StateName, type LeadSnapshot, type LifecycleDefinition } from './schema.ts';
import { canReceiveFollowUp, pathOf, type ApplyResult } from './transition.ts';

/** The `detail` of `lead.state_changed`. */
export const StateChangedDetailSchema = z
  .object({
    /**
     * `<leadId>:v<version>`: unique per change (every change bumps the version). The outbox
     * publishes at least once, so consumers dedupe on it (the CRM and scheduler ports already key
     * their writes on (lead, version)).
     */
    changeId: z.string().min(1),
    leadId: z.string().min(1),
    /** The event that caused the change (its id and type; its time is `at`). */
    eventId: z.string().min(1),
    eventType: z.string().min(1),
    at: z.iso.datetime({ offset: true }),
    from: StateName,
    to: StateName,
    /** `to` as a dotted path, e.g. `active.lead_qualification.engaged`. */
    path: z.string().min(1),
    context: LeadContextSchema,
    version: z.number().int().nonnegative(),
    conversation: z.number().int().positive(),
    eventCount: z.number().int().nonnegative(),
    canReceiveFollowUp: z.boolean(),
    /** System events the trigger raised, in order (`follow_up.stopped`, `goal.hit`). */
    raised: z.array(z.string()),
  })
  .strict();
export type StateChangedDetail = z.infer<typeof StateChangedDetailSchema>;

/**
 * The change `result` made to a lead that was `before`, or `undefined` when its state and context
 * are what they were (an event that was only logged, a CRM echo): nothing is published then.
 */
export function stateChangeOf(def: LifecycleDefinition, before: LeadSnapshot, result: ApplyResult): StateChangedDetail | undefined {
  const after = result.snapshot;
  const sameContext = (Object.keys(after.context) as (keyof LeadSnapshot['context'])[]).every((k) => after.context[k] === before.context[k]);
  if (after.state === before.state && sameContext) return undefined;
  const [trigger, ...raised] = result.events;
  return {
    changeId: `${trigger!.leadId}:v${after.version}`,
    leadId: trigger!.leadId,
    eventId: trigger!.id,
    eventType: trigger!.type,
    at: trigger!.time,
    from: before.state,
    to: after.state,
    path: pathOf(def, after.state),
    context: { ...after.context },
    version: after.version,
    conversation: after.conversation,
    eventCount: after.eventCount,
    canReceiveFollowUp: canReceiveFollowUp(after),
    raised: raised.map((e) => e.type),
  };
}

const StateChangedEnvelopeSchema = EventBridgeEnvelopeSchema.extend({
  source: z.literal(LIFECYCLE_SOURCE),
  'detail-type': z.literal(STATE_CHANGED),
  detail: StateChangedDetailSchema,
});

/**
 * The detail of a `lead.state_changed` event as a listener receives it.
 * @throws InvalidInputError for anything else.
 */
export function parseStateChanged(envelope: unknown): StateChangedDetail {
  const parsed = StateChangedEnvelopeSchema.safeParse(envelope);
  if (parsed.success) return parsed.data.detail;
  const issue = parsed.error.issues[0]!;
  throw new InvalidInputError(`${STATE_CHANGED} event: ${issue.path.join('.') || '(root)'}: ${issue.message}`);
}

/** What the CRM is told: the lead's current position, with its version so that the CRM can ignore out-of-order updates. */
export interface CrmLeadState {
  leadId: string;
  state: string;
  path: string;
  followUpsStopped: boolean;
  canReceiveFollowUp: boolean;
  version: number;
  conversation: number;
  /** When the event that caused the change happened. */
  updatedAt: string;
}

export function crmUpdateOf(change: StateChangedDetail): CrmLeadState {
  return {
    leadId: change.leadId,
    state: change.to,
    path: change.path,
    followUpsStopped: change.context.followUpsStopped,
    canReceiveFollowUp: change.canReceiveFollowUp,
    version: change.version,
    conversation: change.conversation,
    updatedAt: change.at,
  };
}

/**
 * States a person on the client's team should hear about when a lead enters them: a meeting to
 * prepare or rebook, a compliance stop, a hand-off, a win. The notifier's rule filters on these.
 */
export const NOTIFY_STATES = ['meeting_booked', 'no_show', 'opted_out', 'goal_hit', 'conversation_stopped', 'deal_closed'] as const;

/** A message for the client's team. */
export interface LeadNotification {
  leadId: string;
  /** Identifies the notification: the same change always gives the same key. */
  key: string;
  subject: string;
  text: string;
}

/** The notification for entering one of {@link NOTIFY_STATES}; `undefined` for any other change (a context-only change included). */
export function notificationFor(change: StateChangedDetail): LeadNotification | undefined {
  if (change.from === change.to || !(NOTIFY_STATES as readonly string[]).includes(change.to)) return undefined;
  const raised = change.raised.length ? ` (raised: ${change.raised.join(', ')})` : '';
  return {
    leadId: change.leadId,
    key: `${change.leadId}:v${change.version}`,
    subject: `Lead ${change.leadId}: ${change.to.replaceAll('_', ' ')}`,
    text: [
      `Lead ${change.leadId} moved from ${change.from} to ${change.to} (${change.path}).`,
      `Cause: ${change.eventType} (${change.eventId}) at ${change.at}${raised}.`,
      `Conversation ${change.conversation}, version ${change.version}; follow-ups ${change.canReceiveFollowUp ? 'may run' : 'do not run'}.`,
    ].join('\n'),
  };
}
