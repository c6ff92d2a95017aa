/**
 * The external systems the lifecycle's listeners talk to, one port each, with an AWS adapter and a
 * local recording adapter (the local session and tests read what was "sent"):
 *
 * | port                    | AWS adapter                                              | local adapter                  |
 * |-------------------------|----------------------------------------------------------|--------------------------------|
 * | {@link CrmPort}         | {@link httpCrm}: JSON webhook, `Idempotency-Key` header  | {@link recordingCrm}           |
 * | {@link NotifierPort}    | {@link sesNotifier}: SES v2 email to the client's team   | {@link recordingNotifier}      |
 * | {@link FollowUpScheduler} | {@link sfnFollowUpScheduler}: a follow-up timer execution | {@link recordingFollowUpScheduler} |
 */
import { createHash } from 'node:crypto';
import { SendEmailCommand, type SESv2Client } from '@aws-sdk/client-sesv2';
import { ExecutionAlreadyExists, StartExecutionCommand, type SFNClient } from '@aws-sdk/client-sfn';
import { CrmSyncError } from '../lib/errors.ts';
import type { CrmLeadState, FollowUpRequest, LeadNotification } from './state-changes.ts';

/** Writes the lead's lifecycle state back to the client's CRM. */
export interface CrmPort {
  /** Idempotent per (lead, version); the CRM ignores a version older than the one it has. */
  syncLeadState(update: CrmLeadState): Promise<void>;
}

/** Tells the client's team about a lead. */
export interface NotifierPort {
  notify(notification: LeadNotification): Promise<void>;
}

/** Arranges for a follow-up to be sent when it is due. */
export interface FollowUpScheduler {
  /** Idempotent per (lead, version): scheduling the same follow-up twice schedules it once. */
  schedule(request: FollowUpRequest): Promise<void>;
}

/** How long the CRM webhook may take before the delivery counts as failed (and is retried). */
const CRM_TIMEOUT_MS = 10_000;

/**
 * AWS adapter: `POST <url>` with the update as JSON and `Idempotency-Key: <lead>:v<version>`.
 * A network error, a timeout, 429 or 5xx throws `CrmSyncError`, so the invocation is retried and
 * finally lands in the listener's dead-letter queue; other 4xx are the CRM refusing the update
 * and throw too (with the status), since retrying cannot help but someone must look.
 */
export function httpCrm(url: string, fetchImpl: typeof fetch = fetch): CrmPort {
  return {
    async syncLeadState(update) {
      let response: Response;
      try {
        response = await fetchImpl(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'idempotency-key': `${update.leadId}:v${update.version}` },
          body: JSON.stringify(update),
          signal: AbortSignal.timeout(CRM_TIMEOUT_MS),
        });
      } catch (e) {
        throw new CrmSyncError(`CRM webhook unreachable: ${(e as Error).message}`, { cause: e });
      }
      if (!response.ok) throw new CrmSyncError(`CRM webhook answered ${response.status} for lead ${update.leadId} v${update.version}`);
    },
  };
}

/** Local adapter: keeps every update, in call order. */
export function recordingCrm(): CrmPort & { readonly calls: CrmLeadState[] } {
  const calls: CrmLeadState[] = [];
  return {
    calls,
    async syncLeadState(update) {
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
export function recordingNotifier(): NotifierPort & { readonly sent: LeadNotification[] } {
  const sent: LeadNotification[] = [];
  return {
    sent,
    async notify(n) {
      sent.push(structuredClone(n));
    },
  };
}

/**
 * The timer execution's name: unique per (lead, version), within Step Functions' 80 characters
 * of `[A-Za-z0-9_-]`. A hash keeps lead ids with other characters (or long ones) apart.
 */
export function followUpExecutionName(request: FollowUpRequest): string {
  const readable = request.leadId.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 40);
  const hash = createHash('sha256').update(request.leadId).digest('hex').slice(0, 12);
  return `${readable}-${hash}-v${request.version}`;
}

/**
 * AWS adapter: starts the follow-up timer state machine (it waits until `dueAt`, then publishes
 * `follow_up.due`), named per (lead, version) so a redelivered change starts nothing new.
 */
export function sfnFollowUpScheduler(client: SFNClient, stateMachineArn: string): FollowUpScheduler {
  return {
    async schedule(request) {
      try {
        await client.send(new StartExecutionCommand({ stateMachineArn, name: followUpExecutionName(request), input: JSON.stringify(request) }));
      } catch (e) {
        if (!(e instanceof ExecutionAlreadyExists)) throw e;
      }
    },
  };
}

/** Local adapter: keeps every request once per (lead, version), like the AWS adapter. */
export function recordingFollowUpScheduler(): FollowUpScheduler & { readonly scheduled: FollowUpRequest[] } {
  const scheduled: FollowUpRequest[] = [];
  return {
    scheduled,
    async schedule(request) {
      if (!scheduled.some((s) => s.leadId === request.leadId && s.version === request.version)) scheduled.push({ ...request });
    },
  };
}
