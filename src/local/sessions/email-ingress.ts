/**
 * The email trigger of a local workflow session: the REAL ingress (`ingestParsed`), configured
 * from the ingress function's environment in the template, so screening, duplicate detection and
 * thread keeping are what runs in AWS. An accepted mail starts its execution in the session's
 * runtime (or its single-prompt agent); a reply to a kept thread becomes the `Email Reply` event
 * the deployed ingress puts on the bus, delivered here straight to the paused event steps.
 */
import { dirname, join } from 'node:path';
import { LocalServiceError } from '../../core/errors.ts';
import type { WorkflowDefinition } from '../../definitions/workflow/schema.ts';
import type { EnvConfig } from '../../project/config.ts';
import { dynamoEventLog } from '../../runtime/event-log.ts';
import {
  DEFAULT_POLICY,
  isRejection,
  localSesMessageId,
  type ParsedMail,
  parseInbound,
  type Rejection,
} from '../../runtime/triggers/email/checks.ts';
import {
  type IngestDeps,
  type IngestResult,
  ingestParsed,
  type ReplyEvents,
} from '../../runtime/triggers/email/ingest.ts';
import { EMAIL_REPLY_DETAIL_TYPE, EMAIL_REPLY_SOURCE } from '../../runtime/triggers/email/reply-event.ts';
import { localStarter } from '../../runtime/triggers/email/starter.ts';
import { dynamoEmailStore } from '../../runtime/triggers/email/store.ts';
import type { LocalExecution, LocalRuntime } from '../asl/runtime.ts';
import type { DynamoDbLocal } from '../cloud/dynamodb-local.ts';
import { recordedEmails, recordingPuts, recordingRefusals, recordingThreads } from '../records/recorded-emails.ts';
import { stateDirs } from '../records/state-dirs.ts';
import type { Delivered, LocalEventWaits } from './event-waits.ts';
import { describeError, type RunResult } from './run-result.ts';
import type { SinglePromptAgent } from './single-prompt-session.ts';

/** What of its session the ingress starts and resumes executions in, and reports them through. */
export interface MailSession {
  readonly workflow: WorkflowDefinition;
  readonly runtime: LocalRuntime;
  readonly eventWaits: LocalEventWaits;
  readonly agent?: SinglePromptAgent;
  readonly onStart?: (name: string) => void;
  /** Keep a finished execution in the session and report it. */
  readonly report: (file: string, execution: LocalExecution, messageId: string | null) => RunResult;
}

/** Where the ingress's environment and the project's email settings come from, and what it records. */
export interface EmailIngressWiring {
  /** The email ingress function's environment; undefined when the stack has none. */
  ingress?: Record<string, string>;
  email?: EnvConfig['email'];
  clock: () => Date;
  /** Where received mail, kept threads and refusals are recorded; `false` records none. */
  emailsDir: string | false;
}

/** The Message-ID of a parsed mail; `null` when it has none or could not be parsed. */
const messageIdIn = (parsed: ParsedMail | Rejection): string | null =>
  (!isRejection(parsed) && parsed.messageId) || null;

/** The trail of a result where nothing ran (fresh arrays for each result). */
const nothingRan = () => ({ steps: [], toolCalls: [], outbox: [] });

/**
 * A mail delivered to a session of a workflow without an email trigger: refused, naming its
 * Message-ID (parsed with no size limit, as there is no ingress policy to apply).
 */
export async function refuseWithoutTrigger(
  workflow: WorkflowDefinition,
  raw: Uint8Array | string,
  file: string,
): Promise<RunResult> {
  const messageId = messageIdIn(await parseInbound(raw, { maxBytes: Number.MAX_SAFE_INTEGER }));
  const reason = `${workflow.manifest.name} has no email trigger: give JSON inputs`;
  return { file, messageId, executionName: null, status: 'REJECTED', reason, ...nothingRan() };
}

/** The email trigger's ingress run in a local session. */
export class LocalEmailIngress {
  private constructor(
    private readonly session: MailSession,
    /** The ingress's stores, policy and clock; each delivery gets its own starter (see `ingest`). */
    private readonly deps: Omit<IngestDeps, 'starter'>,
    /** The address mail is sent to (the environment's first receiving address). */
    readonly inbox: string,
    /** Whether the workflow waits for replies: then they go to its event steps (`REPLY_EVENT_BUS`). */
    private readonly replies: boolean,
  ) {}

  /**
   * The ingress of `session`'s stack, on the tables of DynamoDB Local; undefined when the stack has
   * no ingress with its tables or the environment no email settings.
   */
  static wire(
    session: MailSession,
    client: DynamoDbLocal['client'],
    { ingress, email, clock, emailsDir }: EmailIngressWiring,
  ): LocalEmailIngress | undefined {
    if (!ingress?.EMAILS_TABLE || !ingress.EVENTS_TABLE || !email) return undefined;
    const emails = dynamoEmailStore(client, ingress.EMAILS_TABLE);
    const events = dynamoEventLog(client, ingress.EVENTS_TABLE);
    const deps = {
      emails: emailsDir
        ? recordingThreads(recordingPuts(emails, recordedEmails(emailsDir)), join(emailsDir, 'threads'))
        : emails,
      // Refused mail is kept beside the recorded emails (the same state root), for the executions list.
      events: emailsDir
        ? recordingRefusals(events, session.workflow.manifest.name, stateDirs(dirname(emailsDir)).refused)
        : events,
      policy: {
        maxBytes: Number(ingress.MAX_MESSAGE_BYTES ?? DEFAULT_POLICY.maxBytes),
        maxBodyChars: Number(ingress.MAX_BODY_CHARS ?? DEFAULT_POLICY.maxBodyChars),
        requireAuthenticatedSender: ingress.REQUIRE_AUTHENTICATED_SENDER === 'true',
        // The ingress handler adds the SES envelope recipients to its own MAIL_FROM; locally they come from the config.
        ownAddresses: [ingress.MAIL_FROM ?? email.mailFrom, ...email.recipients].map((a) => a.toLowerCase()),
      },
      clock,
    };
    return new LocalEmailIngress(session, deps, email.recipients[0]!, Boolean(ingress.REPLY_EVENT_BUS));
  }

  /**
   * Deliver one raw mail, as SES would (verdicts from the headers SES adds), and report what
   * happened. Never throws: a fault of the local setup is a `FAILED` result.
   * @param file how the result names the mail.
   */
  async deliver(raw: Uint8Array | string, file: string): Promise<RunResult> {
    // Parsed as the ingress parses it: the one parse gives the ingress its mail and the result its Message-ID.
    const parsed = await parseInbound(raw, this.deps.policy);
    const messageId = messageIdIn(parsed);
    let executionName: string | null = null;
    try {
      const { ingested, execution, singlePrompt, replied } = await this.ingest(raw, parsed);
      executionName = ingested.executionName;
      const base = { file, messageId, executionName };
      if (ingested.status === 'REJECTED')
        return { ...base, status: 'REJECTED', reason: `${ingested.reason}: ${ingested.detail}`, ...nothingRan() };
      if (ingested.status === 'DUPLICATE')
        return {
          ...base,
          status: 'DUPLICATE',
          reason: `the same mail (Message-ID) was already delivered as ${executionName}; nothing new ran`,
          ...nothingRan(),
        };
      if (ingested.status === 'REPLIED') return this.reportReply(base, ingested.thread, replied);
      if (singlePrompt) return { ...(await singlePrompt), file, messageId };
      if (!execution) throw new LocalServiceError(`execution ${executionName} was started but did not report back`);
      return this.session.report(file, await execution, messageId);
    } catch (e) {
      // A fault of the local setup (DynamoDB Local gone, a broken handler module): report it on this input and go on.
      return {
        file,
        messageId,
        executionName,
        status: 'FAILED',
        reason: describeError((e as Error).name, (e as Error).message),
        ...nothingRan(),
      };
    }
  }

  /**
   * Run the ingress on one parsed mail, received now. Its starter is this delivery's own, so the
   * execution it starts comes back here with the ingress's answer.
   */
  private async ingest(
    raw: Uint8Array | string,
    parsed: ParsedMail | Rejection,
  ): Promise<{
    ingested: IngestResult;
    execution?: Promise<LocalExecution>;
    singlePrompt?: Promise<RunResult>;
    replied?: Delivered;
  }> {
    const { session } = this;
    let execution: Promise<LocalExecution> | undefined;
    let singlePrompt: Promise<RunResult> | undefined;
    let replied: Delivered | undefined;
    // What the deployed ingress puts on the bus, for the resumer: here, straight to the event steps.
    const replies: ReplyEvents | undefined = this.replies
      ? {
          put: async (detail, time) => {
            const event = { source: EMAIL_REPLY_SOURCE, detailType: EMAIL_REPLY_DETAIL_TYPE, detail: { ...detail } };
            replied = await session.eventWaits.send({ ...event, time: new Date(time) });
          },
        }
      : undefined;
    const starter = session.agent
      ? session.agent.starter((name, run) => {
          singlePrompt = run;
          session.onStart?.(name);
        })
      : localStarter(session.runtime, session.workflow.manifest.name, (name, started) => {
          execution = started;
          session.onStart?.(name);
        });
    const envelope = { id: await localSesMessageId(raw), receivedAt: this.deps.clock().toISOString() };
    const ingested = await ingestParsed(parsed, undefined, envelope, { ...this.deps, starter, replies });
    return { ingested, execution, singlePrompt, replied };
  }

  /** A reply delivered as an event: the execution it resumed (or timed out), else why it resumed none. */
  private reportReply(
    base: { file: string; messageId: string | null; executionName: string | null },
    thread: string,
    replied: Delivered | undefined,
  ): RunResult {
    const [resumed] = replied?.executions ?? [];
    if (resumed) return this.session.report(base.file, resumed, base.messageId);
    const reasons = (replied?.outcomes ?? []).flatMap((o) => (o.outcome === 'unmatched' ? [o.reason] : []));
    return {
      ...base,
      status: 'REJECTED',
      reason: `a reply in the thread of ${thread}, delivered as an Email Reply event: it resumed nothing (${reasons.join(', ') || 'no outcome'})`,
      ...nothingRan(),
    };
  }
}
