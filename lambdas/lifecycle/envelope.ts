/**
 * How lifecycle events travel on EventBridge, both ways. A producer (the CRM, the agent, the CLI's
 * replay) puts one entry per event on the leads bus:
 *
 * | PutEvents entry | envelope field   | lifecycle event                                          |
 * |-----------------|------------------|----------------------------------------------------------|
 * | `Source`        | `source`         | one of {@link LEAD_EVENT_SOURCES} (the rule routes these) |
 * | `DetailType`    | `detail-type`    | `type`                                                   |
 * | `Time`          | `time`           | `time` (EventBridge keeps whole seconds)                 |
 * | `Detail`        | `detail.leadId`  | `leadId`                                                 |
 * |                 | `detail.eventId` | `id` when given, else the envelope `id`                  |
 * |                 | other `detail.*` | `detail` (omitted when empty)                            |
 *
 * The dedup id is the envelope `id`, which stays the same when EventBridge redelivers an event.
 * A producer that retries `PutEvents` creates a new envelope id for the same fact, so producers
 * that can retry (or replay a log) set `detail.eventId` to their own stable id, which then wins.
 */
import type { PutEventsRequestEntry } from '@aws-sdk/client-eventbridge';
import * as z from 'zod';
import { InvalidInputError } from '../lib/errors.ts';
import { LifecycleEventSchema, type LifecycleEvent } from './schema.ts';

/** What EventBridge Scheduler puts on the bus for a lead's timer (`renewal.due`, and `follow_ups.exhausted` from the follow-up sender). */
export const SCHEDULER_SOURCE = 'stepwise.scheduler';
/** Sources whose events the lifecycle applies (the incoming rule's pattern). */
export const LEAD_EVENT_SOURCES = ['stepwise.crm', 'stepwise.agent', 'stepwise.replay', SCHEDULER_SOURCE] as const;
export type LeadEventSource = (typeof LEAD_EVENT_SOURCES)[number];
/** The source of what the lifecycle itself publishes; never routed back into it. */
export const LIFECYCLE_SOURCE = 'stepwise.lifecycle';
/** Published after every applied event that changed the lead's state or context. */
export const STATE_CHANGED = 'lead.state_changed';
/** Put on the bus by the lead's follow-up schedule when a follow-up is due (source `stepwise.lifecycle`); the follow-up sender consumes it. */
export const FOLLOW_UP_DUE = 'follow_up.due';

/** `detail` keys the envelope mapping owns; a lifecycle event's own detail cannot use them. */
const RESERVED_DETAIL_KEYS = ['leadId', 'eventId'] as const;

/** The EventBridge event as a rule target receives it (fields the lifecycle does not read pass through). */
export const EventBridgeEnvelopeSchema = z.looseObject({
  id: z.string().min(1),
  'detail-type': z.string().min(1),
  source: z.string().min(1),
  time: z.iso.datetime({ offset: true }),
  detail: z.looseObject({ leadId: z.string().min(1), eventId: z.string().min(1).optional() }),
});
export type EventBridgeEnvelope = z.infer<typeof EventBridgeEnvelopeSchema>;

function invalid(what: string, error: z.ZodError): InvalidInputError {
  const issue = error.issues[0]!;
  return new InvalidInputError(`${what}: ${issue.path.join('.') || '(root)'}: ${issue.message}`);
}

/**
 * The lifecycle event an EventBridge envelope carries.
 * @throws InvalidInputError when the envelope lacks an id, a type, an ISO time or `detail.leadId`.
 * @example
 * eventFromEnvelope({ id: 'eb-1', 'detail-type': 'meeting.booked', source: 'stepwise.crm', time: '2025-01-06T14:00:00Z',
 *   detail: { leadId: 'lead-42', eventId: 'crm-981', calendar: 'sales' } });
 * // { id: 'crm-981', leadId: 'lead-42', type: 'meeting.booked', time: '2025-01-06T14:00:00Z', detail: { calendar: 'sales' } }
 */
export function eventFromEnvelope(envelope: unknown): LifecycleEvent {
  const parsed = EventBridgeEnvelopeSchema.safeParse(envelope);
  if (!parsed.success) throw invalid('EventBridge event', parsed.error);
  const { leadId, eventId, ...detail } = parsed.data.detail;
  return {
    id: eventId ?? parsed.data.id,
    leadId,
    type: parsed.data['detail-type'],
    time: parsed.data.time,
    ...(Object.keys(detail).length > 0 && { detail }),
  };
}

/**
 * The PutEvents entry that carries `event` (the inverse of {@link eventFromEnvelope}).
 * @throws InvalidInputError for an event that fails `LifecycleEventSchema` or whose detail uses a reserved key.
 */
export function toPutEventsEntry(event: LifecycleEvent, eventBusName: string, source: LeadEventSource): PutEventsRequestEntry {
  const parsed = LifecycleEventSchema.safeParse(event);
  if (!parsed.success) throw invalid('lifecycle event', parsed.error);
  const { id, leadId, type, time, detail = {} } = parsed.data;
  const reserved = RESERVED_DETAIL_KEYS.find((key) => Object.hasOwn(detail, key));
  if (reserved) throw new InvalidInputError(`lifecycle event: detail.${reserved} is reserved by the EventBridge envelope`);
  return {
    EventBusName: eventBusName,
    Source: source,
    DetailType: type,
    Time: new Date(time),
    Detail: JSON.stringify({ leadId, eventId: id, ...detail }),
  };
}
