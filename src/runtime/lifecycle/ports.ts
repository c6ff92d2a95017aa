/**
 * The external systems the lifecycle's listeners talk to (each behind a feature of the statechart), one port each, with
 * an AWS adapter and a
 * local recording adapter (the local session and tests read what was "sent"):
 *
 * | port                    | AWS adapter                                              | local adapter                  |
 * |-------------------------|----------------------------------------------------------|--------------------------------|
 * | {@link CrmPort}         | {@link httpCrm}: JSON webhook, `Idempotency-Key` header  | {@link recordingCrm}           |
 * | {@link NotifierPort}    | {@link sesNotifier}: SES v2 email to the client's team   | {@link recordingNotifier}      |
 * | {@link TimerScheduler} | {@link eventBridgeScheduler}: one-time EventBridge Scheduler schedules | `LocalScheduler` (src/local/cloud/scheduler.ts), on an injected clock |
 * | {@link FollowUpChannel} | {@link httpFollowUpChannel}: the agent's messaging webhook | {@link recordingFollowUpChannel} |
 */
import {
  ConflictException,
  CreateScheduleCommand,
  DeleteScheduleCommand,
  GetScheduleCommand,
  type GetScheduleCommandOutput,
  ResourceNotFoundException,
  type SchedulerClient,
  UpdateScheduleCommand,
} from '@aws-sdk/client-scheduler';
import { type SESv2Client, SendEmailCommand } from '@aws-sdk/client-sesv2';
import { CrmSyncError, StepwiseError } from '../../core/errors.ts';
import type { CrmEntityState, EntityNotification } from './state-changes.ts';
import { supersedes, type TimerRequest, type TimerStamp, TimerStampSchema } from './timers.ts';

/**
 * The agent's channel did not take a follow-up (network error, timeout, non-2xx). Transient: the delivery is retried,
 * then dead-lettered.
 */
export class FollowUpSendError extends StepwiseError {}

/** Writes the entity's lifecycle state back to the client's CRM. */
export interface CrmPort {
  /** Idempotent per (entity, version); the CRM ignores a version older than the one it has. */
  syncEntityState(update: CrmEntityState): Promise<void>;
}

/** Tells the client's team about an entity. */
export interface NotifierPort {
  notify(notification: EntityNotification): Promise<void>;
}

/** One-time schedules for an entity's timers (timers.ts). */
export interface TimerScheduler {
  /** Create or replace the schedule `request.name`, unless the existing one is newer (`supersedes`): then `kept`. */
  set(request: TimerRequest): Promise<'set' | 'kept'>;
  /** Delete a schedule; a missing one is fine. */
  cancel(name: string): Promise<void>;
  /** The pending schedule of that name, if any. */
  get(name: string): Promise<TimerRequest | undefined>;
}

/** How long the CRM webhook may take before the delivery counts as failed (and is retried). */
const CRM_TIMEOUT_MS = 10_000;

/**
 * AWS adapter: `POST <url>` with the update as JSON, the entity id under `entityKey` (the
 * statechart's `entity.key`, so a lead's CRM gets `leadId`), and `Idempotency-Key: <entity>:v<version>`.
 * A network error, a timeout, 429 or 5xx throws `CrmSyncError`, so the invocation is retried and
 * finally lands in the listener's dead-letter queue; other 4xx are the CRM refusing the update
 * and throw too (with the status), since retrying cannot help but someone must look.
 */
export function httpCrm(url: string, entityKey: string, fetchImpl: typeof fetch = fetch): CrmPort {
  return {
    async syncEntityState(update) {
      const { entityId, ...state } = update;
      let response: Response;
      try {
        response = await fetchImpl(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'idempotency-key': `${entityId}:v${update.version}` },
          body: JSON.stringify({ [entityKey]: entityId, ...state }),
          signal: AbortSignal.timeout(CRM_TIMEOUT_MS),
        });
      } catch (e) {
        throw new CrmSyncError(`CRM webhook unreachable: ${(e as Error).message}`, { cause: e });
      }
      if (!response.ok)
        throw new CrmSyncError(
          `CRM webhook answered ${response.status} for ${entityKey} ${entityId} v${update.version}`,
        );
    },
  };
}

/** Local adapter: keeps every update, in call order. */
export function recordingCrm(): CrmPort & { readonly calls: CrmEntityState[] } {
  const calls: CrmEntityState[] = [];
  return {
    calls,
    async syncEntityState(update) {
      calls.push(structuredClone(update));
    },
  };
}

/** AWS adapter: an SES v2 plain-text email from `from` (a verified identity) to `to`. */
export function sesNotifier(client: SESv2Client, from: string, to: string): NotifierPort {
  return {
    async notify(n) {
      await client.send(
        new SendEmailCommand({
          FromEmailAddress: from,
          Destination: { ToAddresses: [to] },
          Content: {
            Simple: {
              Subject: { Data: n.subject, Charset: 'UTF-8' },
              Body: { Text: { Data: n.text, Charset: 'UTF-8' } },
              // RFC 3834: machine-generated, so auto-responders do not answer it.
              Headers: [{ Name: 'Auto-Submitted', Value: 'auto-generated' }],
            },
          },
        }),
      );
    },
  };
}

/** Local adapter: keeps every notification, in call order. */
export function recordingNotifier(): NotifierPort & { readonly sent: EntityNotification[] } {
  const sent: EntityNotification[] = [];
  return {
    sent,
    async notify(n) {
      sent.push(structuredClone(n));
    },
  };
}

/** How long before its time a one-time schedule must be created, so it still fires (a late sender's "now"). */
const MIN_LEAD_MS = 60_000;

/**
 * AWS adapter: one-time EventBridge Scheduler schedules in `groupName`, named per (kind, entity) so
 * a new timer replaces the old one, `at()` in UTC, flexible time window off (follow-ups go out on
 * time), deleted after they fire. The target is the lifecycle's bus (`EventBridgeParameters`: the
 * delivery's source and detail-type; `Input`: its detail), through `roleArn`; deliveries that fail
 * every retry land in `deadLetterArn`. A timer never replaces a newer one (`supersedes`): a late
 * state change cannot push an entity's current timer out. `entityKey` is where a renewal's detail
 * names its entity (the statechart's `entity.key`).
 */
export function eventBridgeScheduler(
  client: SchedulerClient,
  target: { groupName: string; roleArn: string; busArn: string; deadLetterArn: string; entityKey: string },
  now: () => number = Date.now,
): TimerScheduler {
  const get = async (name: string) => {
    try {
      return await client.send(new GetScheduleCommand({ Name: name, GroupName: target.groupName }));
    } catch (e) {
      if (e instanceof ResourceNotFoundException) return undefined;
      throw e;
    }
  };
  return {
    async set(request) {
      const existing = await get(request.name);
      const current = existing && stampOf(existing.Target?.Input);
      if (current && !supersedes(request.stamp, current)) return 'kept';
      const dueMs = Math.max(Date.parse(request.dueAt), now() + MIN_LEAD_MS);
      const input = {
        Name: request.name,
        GroupName: target.groupName,
        Description: `stepwise ${request.kind} timer of ${request.entityId}`.slice(0, 512),
        ScheduleExpression: `at(${new Date(dueMs).toISOString().slice(0, 19)})`,
        ScheduleExpressionTimezone: 'UTC',
        FlexibleTimeWindow: { Mode: 'OFF' as const },
        ActionAfterCompletion: 'DELETE' as const,
        State: 'ENABLED' as const,
        Target: {
          Arn: target.busArn,
          RoleArn: target.roleArn,
          Input: JSON.stringify({ ...request.delivery.detail, timer: request.stamp }),
          EventBridgeParameters: { Source: request.delivery.source, DetailType: request.delivery.detailType },
          DeadLetterConfig: { Arn: target.deadLetterArn },
          RetryPolicy: { MaximumRetryAttempts: 20, MaximumEventAgeInSeconds: 24 * 3600 },
        },
      };
      if (existing) await client.send(new UpdateScheduleCommand(input));
      else {
        try {
          await client.send(new CreateScheduleCommand(input));
        } catch (e) {
          // Created meanwhile by a concurrent delivery: replace it (both carry the same or newer stamps).
          if (!(e instanceof ConflictException)) throw e;
          await client.send(new UpdateScheduleCommand(input));
        }
      }
      return 'set';
    },
    async get(name) {
      const schedule = await get(name);
      return schedule && timerOf(name, schedule, target.entityKey);
    },
    async cancel(name) {
      try {
        await client.send(new DeleteScheduleCommand({ Name: name, GroupName: target.groupName }));
      } catch (e) {
        if (!(e instanceof ResourceNotFoundException)) throw e;
      }
    },
  };
}

/** A schedule read back as the timer that created it; `undefined` for one that is not ours. */
function timerOf(name: string, schedule: GetScheduleCommandOutput, entityKey: string): TimerRequest | undefined {
  const stamp = stampOf(schedule.Target?.Input);
  const at = /^at\((\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)\)$/.exec(schedule.ScheduleExpression ?? '');
  const params = schedule.Target?.EventBridgeParameters;
  if (!stamp || !at || !params?.Source || !params.DetailType) return undefined;
  // The input is the detail plus its stamp (`timer`); `follow_up.due` carries the stamp in its detail anyway.
  const detail = JSON.parse(schedule.Target!.Input!) as Record<string, unknown>;
  const kind = name.startsWith('renewal-') ? 'renewal' : name.startsWith('after-') ? 'after' : 'follow-up';
  // `follow_up.due` names the entity `entityId`; a renewal or a delayed transition, being an incoming event, under the entity key.
  const entityId = String(kind === 'follow-up' ? detail.entityId : detail[entityKey]);
  return {
    name,
    kind,
    entityId,
    dueAt: `${at[1]}Z`,
    stamp,
    delivery: { source: params.Source, detailType: params.DetailType, detail },
  };
}

/** The stamp a schedule's input carries (`timer`), if it is one of ours. */
function stampOf(input: string | undefined): TimerStamp | undefined {
  try {
    const parsed = TimerStampSchema.safeParse((JSON.parse(input ?? 'null') as { timer?: unknown } | null)?.timer);
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** A follow-up to send: the entity, which follow-up of the chain, and a key that is the same for every retry of it. */
export interface FollowUpMessage {
  entityId: string;
  followUp: number;
  version: number;
  /** Idempotency key: the id of the event the follow-up is logged as (the feature's `sent`). */
  key: string;
}

/** The agent's outbound channel for follow-ups. */
export interface FollowUpChannel {
  /** Idempotent per `key`: a retried follow-up is sent once. */
  sendFollowUp(message: FollowUpMessage): Promise<void>;
}

/**
 * AWS adapter: `POST <url>` with the message as JSON (the entity id under `entityKey`) and
 * `Idempotency-Key: <key>` to the agent's messaging endpoint. Failures throw `FollowUpSendError`, so the delivery is retried.
 */
export function httpFollowUpChannel(url: string, entityKey: string, fetchImpl: typeof fetch = fetch): FollowUpChannel {
  return {
    async sendFollowUp(message) {
      const { entityId, ...rest } = message;
      let response: Response;
      try {
        response = await fetchImpl(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'idempotency-key': message.key },
          body: JSON.stringify({ [entityKey]: entityId, ...rest }),
          signal: AbortSignal.timeout(CRM_TIMEOUT_MS),
        });
      } catch (e) {
        throw new FollowUpSendError(`follow-up channel unreachable: ${(e as Error).message}`, { cause: e });
      }
      if (!response.ok)
        throw new FollowUpSendError(
          `follow-up channel answered ${response.status} for ${message.entityId} follow-up ${message.followUp}`,
        );
    },
  };
}

/** Local adapter: keeps every follow-up once per key, in call order. */
export function recordingFollowUpChannel(): FollowUpChannel & { readonly sent: FollowUpMessage[] } {
  const sent: FollowUpMessage[] = [];
  return {
    sent,
    async sendFollowUp(message) {
      if (!sent.some((m) => m.key === message.key)) sent.push({ ...message });
    },
  };
}
