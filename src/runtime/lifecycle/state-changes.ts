/**
 * `<entity>.state_changed` (`lead.state_changed`): what the lifecycle publishes after an applied
 * event changed an entity's state or context, and what each listener makes of it (the CRM update,
 * the notification, the follow-up to schedule). Pure: the listener handlers parse, call one of
 * these, and hand the result to their port.
 */
import * as z from 'zod';
import { InvalidInputError } from '../../core/errors.ts';
import { delayedStatesOnChange } from '../../definitions/lifecycle/delays.ts';
import {
  EntityContextSchema,
  type EntitySnapshot,
  LIFECYCLE_SOURCE,
  type LifecycleDefinition,
  type LoggedEvent,
  StateName,
} from '../../definitions/lifecycle/schema.ts';
import { EventBridgeEnvelopeSchema, STATE_CHANGED_SUFFIX } from './envelope.ts';
import { type ApplyResult, canReceiveFollowUp, pathOf } from './transition.ts';

/** The `detail` of `<entity>.state_changed`. */
export const StateChangedDetailSchema = z
  .object({
    /**
     * `<entityId>:v<version>`: unique per change (every change bumps the version). The outbox
     * publishes at least once, so consumers dedupe on it (the CRM and scheduler ports already key
     * their writes on (entity, version)).
     */
    changeId: z.string().min(1),
    entityId: z.string().min(1),
    /** The event that caused the change (its id and type; its time is `at`). */
    eventId: z.string().min(1),
    eventType: z.string().min(1),
    at: z.iso.datetime({ offset: true }),
    from: StateName,
    to: StateName,
    /** `to` as a dotted path, e.g. `active.lead_qualification.engaged`. */
    path: z.string().min(1),
    context: EntityContextSchema,
    version: z.number().int().nonnegative(),
    conversation: z.number().int().positive(),
    eventCount: z.number().int().nonnegative(),
    /** With the follow-ups feature: whether the follow-up sender may message the entity now. */
    canReceiveFollowUp: z.boolean().optional(),
    /** System events the trigger raised, in order (`follow_up.stopped`, `goal.hit`). */
    raised: z.array(z.string()),
    /**
     * For the delayed transitions this change starts whose delay is `detail.<field>`: that field of
     * the triggering event, by the transition's event type (`null`: missing or not text).
     */
    afterDelays: z.record(z.string(), z.string().nullable()).optional(),
  })
  .strict();
export type StateChangedDetail = z.infer<typeof StateChangedDetailSchema>;

/**
 * The change `result` made to an entity that was `before`, or `undefined` when its state and
 * context are what they were (an event that was only logged, an external echo): nothing is published then.
 */
export function stateChangeOf(
  def: LifecycleDefinition,
  before: EntitySnapshot,
  result: ApplyResult,
): StateChangedDetail | undefined {
  const after = result.snapshot;
  const sameContext = (Object.keys(after.context) as (keyof EntitySnapshot['context'])[]).every(
    (k) => after.context[k] === before.context[k],
  );
  if (after.state === before.state && sameContext) return undefined;
  const [trigger, ...raised] = result.events;
  const afterDelays = detailDelays(def, before.state, after.state, trigger!);
  return {
    changeId: `${trigger!.entityId}:v${after.version}`,
    entityId: trigger!.entityId,
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
    ...(def.features.followUps && { canReceiveFollowUp: canReceiveFollowUp(def, after) }),
    raised: raised.map((e) => e.type),
    ...(Object.keys(afterDelays).length && { afterDelays }),
  };
}

/** The durations the delayed transitions entered by a change read from the triggering event's detail. */
function detailDelays(
  def: LifecycleDefinition,
  from: string,
  to: string,
  trigger: LoggedEvent,
): Record<string, string | null> {
  const delays: Record<string, string | null> = {};
  for (const { delayed, change } of delayedStatesOnChange(def, from, to)) {
    if (change !== 'entered' || !('field' in delayed.delay)) continue;
    const value =
      trigger.detail && Object.hasOwn(trigger.detail, delayed.delay.field)
        ? trigger.detail[delayed.delay.field]
        : undefined;
    delays[delayed.type] = typeof value === 'string' ? value : null;
  }
  return delays;
}

const StateChangedEnvelopeSchema = EventBridgeEnvelopeSchema.extend({
  source: z.literal(LIFECYCLE_SOURCE),
  'detail-type': z.string().endsWith(STATE_CHANGED_SUFFIX),
  detail: StateChangedDetailSchema,
});

/**
 * The detail of a `<entity>.state_changed` event as a listener receives it.
 * @throws InvalidInputError for anything else.
 */
export function parseStateChanged(envelope: unknown): StateChangedDetail {
  const parsed = StateChangedEnvelopeSchema.safeParse(envelope);
  if (parsed.success) return parsed.data.detail;
  const issue = parsed.error.issues[0]!;
  throw new InvalidInputError(`state change event: ${issue.path.join('.') || '(root)'}: ${issue.message}`);
}

/** What the CRM is told: the entity's current position, with its version so that the CRM can ignore out-of-order updates. */
export interface CrmEntityState {
  entityId: string;
  state: string;
  path: string;
  /** With the follow-ups feature. */
  followUpsStopped?: boolean;
  /** With the follow-ups feature. */
  canReceiveFollowUp?: boolean;
  version: number;
  conversation: number;
  /** When the event that caused the change happened. */
  updatedAt: string;
}

export function crmUpdateOf(change: StateChangedDetail): CrmEntityState {
  return {
    entityId: change.entityId,
    state: change.to,
    path: change.path,
    ...(change.context.followUpsStopped !== undefined && { followUpsStopped: change.context.followUpsStopped }),
    ...(change.canReceiveFollowUp !== undefined && { canReceiveFollowUp: change.canReceiveFollowUp }),
    version: change.version,
    conversation: change.conversation,
    updatedAt: change.at,
  };
}

/** A message for the client's team. */
export interface EntityNotification {
  entityId: string;
  /** Identifies the notification: the same change always gives the same key. */
  key: string;
  subject: string;
  text: string;
}

/**
 * The notification for entering one of the notify feature's states (`features.notify.states`:
 * what a person on the client's team should hear about); `undefined` for any other change (a
 * context-only change included).
 */
export function notificationFor(def: LifecycleDefinition, change: StateChangedDetail): EntityNotification | undefined {
  if (change.from === change.to || !def.features.notify?.states.includes(change.to)) return undefined;
  const raised = change.raised.length ? ` (raised: ${change.raised.join(', ')})` : '';
  const entity = def.entity.name.charAt(0).toUpperCase() + def.entity.name.slice(1).replaceAll('_', ' ');
  const followUps =
    change.canReceiveFollowUp === undefined
      ? ''
      : `; follow-ups ${change.canReceiveFollowUp ? 'may run' : 'do not run'}`;
  return {
    entityId: change.entityId,
    key: `${change.entityId}:v${change.version}`,
    subject: `${entity} ${change.entityId}: ${change.to.replaceAll('_', ' ')}`,
    text: [
      `${entity} ${change.entityId} moved from ${change.from} to ${change.to} (${change.path}).`,
      `Cause: ${change.eventType} (${change.eventId}) at ${change.at}${raised}.`,
      `Conversation ${change.conversation}, version ${change.version}${followUps}.`,
    ].join('\n'),
  };
}
