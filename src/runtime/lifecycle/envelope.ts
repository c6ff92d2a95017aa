/**
 * How lifecycle events travel on EventBridge, both ways. A producer (a CRM, an agent, the CLI's
 * replay) puts one entry per event on the lifecycle's bus:
 *
 * | PutEvents entry | envelope field        | lifecycle event                                        |
 * |-----------------|-----------------------|--------------------------------------------------------|
 * | `Source`        | `source`              | one of the lifecycle's `sources` (the rule routes them) |
 * | `DetailType`    | `detail-type`         | `type`                                                 |
 * | `Time`          | `time`                | `time` (EventBridge keeps whole seconds)               |
 * | `Detail`        | `detail.<entity key>` | `entityId` (`detail.leadId` for the lead lifecycle)    |
 * |                 | `detail.eventId`      | `id` when given, else the envelope `id`                |
 * |                 | other `detail.*`      | `detail` (omitted when empty)                          |
 *
 * The dedup id is the envelope `id`, which stays the same when EventBridge redelivers an event.
 * A producer that retries `PutEvents` creates a new envelope id for the same fact, so producers
 * that can retry (or replay a log) set `detail.eventId` to their own stable id, which then wins.
 */
import type { PutEventsRequestEntry } from '@aws-sdk/client-eventbridge';
import * as z from 'zod';
import { JsonObjectSchema } from '../../core/dynamo-json.ts';
import { InvalidInputError } from '../../core/errors.ts';
import {
  type LifecycleDefinition,
  type LifecycleEvent,
  LifecycleEventSchema,
} from '../../definitions/lifecycle/schema.ts';

/**
 * The detail-type of what the lifecycle publishes after every applied event that changed an entity's state or context:
 * `<entity>.state_changed`.
 */
export const STATE_CHANGED_SUFFIX = '.state_changed';
/**
 * Put on the bus by an entity's follow-up schedule when a follow-up is due (source `stepwise.lifecycle`); the follow-up
 * sender consumes it.
 */
export const FOLLOW_UP_DUE = 'follow_up.due';

/**
 * The largest EventBridge event (its JSON, UTF-8) a lifecycle applies: 240 KiB. Step Functions
 * keeps a state within 256 KiB; the event is in the state once, beside the entity's snapshot and
 * the applied result, which the other 16 KiB hold. A larger event is refused with
 * `EventTooLargeError` into the incoming dead-letter queue (EventBridge itself takes entries only
 * under 256 KB).
 */
export const MAX_EVENT_BYTES = 240 * 1024;

/** `lead.state_changed` for the lead lifecycle. */
export const stateChangedType = (def: LifecycleDefinition): string => `${def.entity.name}${STATE_CHANGED_SUFFIX}`;

/**
 * The EventBridge event as a rule target receives it (fields the lifecycle does not read pass
 * through). `detail` is kept as it came: its own keys, `__proto__` included, are event data.
 */
export const EventBridgeEnvelopeSchema = z.looseObject({
  id: z.string().min(1),
  'detail-type': z.string().min(1),
  source: z.string().min(1),
  time: z.iso.datetime({ offset: true }),
  detail: JsonObjectSchema,
});
export type EventBridgeEnvelope = z.infer<typeof EventBridgeEnvelopeSchema>;

function invalid(what: string, error: z.ZodError): InvalidInputError {
  const issue = error.issues[0]!;
  return new InvalidInputError(`${what}: ${issue.path.join('.') || '(root)'}: ${issue.message}`);
}

/** A non-empty string at `detail[field]`, else why not. */
function detailString(detail: Record<string, unknown>, field: string): string | { problem: string } {
  if (!Object.hasOwn(detail, field)) return { problem: 'missing' };
  const value = detail[field];
  return typeof value === 'string' && value.length > 0
    ? value
    : { problem: `${JSON.stringify(value)?.slice(0, 40) ?? String(value)} is not a non-empty string` };
}

/**
 * The lifecycle event an EventBridge envelope carries.
 * @throws InvalidInputError when the envelope lacks an id, a type, an ISO time or the entity id (`detail.<entity key>`).
 * @example
 * eventFromEnvelope(def, { id: 'eb-1', 'detail-type': 'meeting.booked', source: 'stepwise.crm', time: '2025-01-06T14:00:00Z',
 *   detail: { leadId: 'lead-42', eventId: 'crm-981', calendar: 'sales' } });
 * // { id: 'crm-981', entityId: 'lead-42', type: 'meeting.booked', time: '2025-01-06T14:00:00Z', detail: { calendar: 'sales' } }
 */
export function eventFromEnvelope(def: LifecycleDefinition, envelope: unknown): LifecycleEvent {
  const parsed = EventBridgeEnvelopeSchema.safeParse(envelope);
  if (!parsed.success) throw invalid('EventBridge event', parsed.error);
  const { key } = def.entity;
  const { [key]: _entity, eventId: _eventId, ...detail } = parsed.data.detail;
  const entityId = detailString(parsed.data.detail, key);
  if (typeof entityId !== 'string')
    throw new InvalidInputError(
      `EventBridge event: detail.${key}: ${entityId.problem}: the event names no ${def.entity.name}`,
    );
  const eventId = Object.hasOwn(parsed.data.detail, 'eventId')
    ? detailString(parsed.data.detail, 'eventId')
    : undefined;
  if (typeof eventId === 'object') throw new InvalidInputError(`EventBridge event: detail.eventId: ${eventId.problem}`);
  return {
    id: eventId ?? parsed.data.id,
    entityId,
    type: parsed.data['detail-type'],
    time: parsed.data.time,
    ...(Object.keys(detail).length > 0 && { detail }),
  };
}

/**
 * The PutEvents entry that carries `event` (the inverse of {@link eventFromEnvelope}).
 * @throws InvalidInputError for an event that fails `LifecycleEventSchema` or whose detail uses a reserved key.
 */
export function toPutEventsEntry(
  def: LifecycleDefinition,
  event: LifecycleEvent,
  eventBusName: string,
  source: string,
): PutEventsRequestEntry {
  const parsed = LifecycleEventSchema.safeParse(event);
  if (!parsed.success) throw invalid('lifecycle event', parsed.error);
  const { id, entityId, type, time, detail = {} } = parsed.data;
  const reserved = [def.entity.key, 'eventId'].find((key) => Object.hasOwn(detail, key));
  if (reserved)
    throw new InvalidInputError(`lifecycle event: detail.${reserved} is reserved by the EventBridge envelope`);
  return {
    EventBusName: eventBusName,
    Source: source,
    DetailType: type,
    Time: new Date(time),
    Detail: JSON.stringify({ [def.entity.key]: entityId, eventId: id, ...detail }),
  };
}
