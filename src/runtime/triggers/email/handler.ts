/**
 * The SES receipt rule's Lambda action (invoked asynchronously after the S3 action stored the
 * raw MIME). Parses the SES event, reads the mail from S3 and hands it to `ingest`. Each mail
 * counts once in `EmailAccepted`, `EmailDuplicate` or `EmailRejected` (dimension `reason`).
 */

import type { Logger } from '@aws-lambda-powertools/logger';
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { SFNClient } from '@aws-sdk/client-sfn';
import { SSMClient } from '@aws-sdk/client-ssm';
import * as z from 'zod';
import type { Env } from '../../../core/env.ts';
import { InvalidInputError, StepwiseError } from '../../../core/errors.ts';
import { dynamoEventLog, type EventLog } from '../../event-log.ts';
import { type ClientTracer, observability } from '../../observability.ts';
import { DEFAULT_POLICY, SesReceiptSchema } from './checks.ts';
import { type IngestResult, ingest, type ReplyEvents } from './ingest.ts';
import { routedStarter, ssmModeStore } from './orchestration.ts';
import { EMAIL_REPLY_DETAIL_TYPE, EMAIL_REPLY_SOURCE } from './reply-event.ts';
import { type ExecutionStarter, sfnStarter } from './starter.ts';
import { dynamoEmailStore, type EmailStore } from './store.ts';

// Our own schema rather than Powertools' SesSchema: that one requires `dmarcPolicy` and every
// common header, which SES omits (dmarcPolicy appears only when DMARC fails). We read only these.
const SesEvent = z.object({
  Records: z
    .array(
      z.object({
        eventSource: z.literal('aws:ses'),
        ses: z.object({
          mail: z.object({ messageId: z.string().min(1) }),
          receipt: SesReceiptSchema.extend({ recipients: z.array(z.string()) }),
        }),
      }),
    )
    .min(1),
});

const IngressEnv = z.object({
  EMAIL_BUCKET: z.string().min(1),
  /** Key prefix of the receipt rule's S3 action; the object key is prefix + SES message id. */
  EMAIL_KEY_PREFIX: z.string().default('inbound/'),
  EMAILS_TABLE: z.string().min(1),
  EVENTS_TABLE: z.string().min(1),
  STATE_MACHINE_ARN: z.string().min(1),
  /**
   * Dual mode (manifest `singlePrompt`): the SSM parameter that says `steps` or `single-prompt`, and the single-prompt
   * agent's state machine.
   */
  ORCHESTRATION_PARAMETER: z.string().min(1).optional(),
  SINGLE_PROMPT_STATE_MACHINE_ARN: z.string().min(1).optional(),
  MAIL_FROM: z.email(),
  MAX_MESSAGE_BYTES: z.coerce.number().int().positive().default(DEFAULT_POLICY.maxBytes),
  MAX_MIME_LINES: z.coerce.number().int().positive().default(DEFAULT_POLICY.maxMimeLines),
  MAX_MIME_PARTS: z.coerce.number().int().positive().default(DEFAULT_POLICY.maxMimeParts),
  MAX_BODY_CHARS: z.coerce.number().int().positive().default(DEFAULT_POLICY.maxBodyChars),
  MAX_HTML_CHARS: z.coerce.number().int().positive().default(DEFAULT_POLICY.maxHtmlChars),
  PARSE_BUDGET_MS: z.coerce.number().int().positive().default(DEFAULT_POLICY.parseBudgetMs),
  REQUIRE_AUTHENTICATED_SENDER: z.stringbool().default(false),
  /** Set when the workflow waits for replies: the bus its `Email Reply` events go on (the ingress may put on it only). */
  REPLY_EVENT_BUS: z.string().min(1).optional(),
  AWS_REGION: z.string().optional(),
  AWS_ENDPOINT_URL_DYNAMODB: z.string().optional(),
  AWS_ENDPOINT_URL_S3: z.string().optional(),
  AWS_ENDPOINT_URL_SFN: z.string().optional(),
  AWS_ENDPOINT_URL_EVENTBRIDGE: z.string().optional(),
});

/** Adapters the local runtime or a test may supply instead of the AWS clients built from env. */
export interface IngressServices {
  s3?: S3Client;
  emails?: EmailStore;
  events?: EventLog;
  starter?: ExecutionStarter;
  replies?: ReplyEvents;
  clock?: () => Date;
}

/** EventBridge refused a reply's event: the delivery fails and Lambda retries it (then the failed-deliveries queue). */
export class ReplyNotDeliveredError extends StepwiseError {}

/** Replies as `stepwise.email` `Email Reply` events on `bus`. */
export function eventBridgeReplies(client: EventBridgeClient, bus: string): ReplyEvents {
  return {
    async put(detail, time) {
      const result = await client.send(
        new PutEventsCommand({
          Entries: [
            {
              EventBusName: bus,
              Source: EMAIL_REPLY_SOURCE,
              DetailType: EMAIL_REPLY_DETAIL_TYPE,
              Detail: JSON.stringify(detail),
              Time: new Date(time),
            },
          ],
        }),
      );
      if (result.FailedEntryCount)
        throw new ReplyNotDeliveredError(`PutEvents refused the reply: ${result.Entries?.[0]?.ErrorCode ?? 'unknown'}`);
    },
  };
}

const OUTCOME_METRIC: Record<IngestResult['status'], string> = {
  STARTED: 'EmailAccepted',
  REPLIED: 'EmailReply',
  DUPLICATE: 'EmailDuplicate',
  REJECTED: 'EmailRejected',
};

/** Handler convention: clients are built on the first invocation, so importing this module never fails. */
export function createHandler(env: Env, services: IngressServices = {}) {
  const { logger, tracer, metrics, publish } = observability(env, 'stepwise-ingress');
  let ready: ReturnType<typeof wire> | undefined;
  return async (event: unknown): Promise<IngestResult[]> => {
    ready ??= wire(env, services, tracer, logger);
    const parsed = SesEvent.safeParse(event);
    if (!parsed.success) throw new InvalidInputError(`not an SES receipt event: ${parsed.error.issues[0]!.message}`);
    const results: IngestResult[] = [];
    for (const { ses } of parsed.data.Records) {
      const { Body } = await ready.s3.send(
        new GetObjectCommand({ Bucket: ready.cfg.EMAIL_BUCKET, Key: ready.cfg.EMAIL_KEY_PREFIX + ses.mail.messageId }),
      );
      if (!Body) throw new InvalidInputError(`no stored mail for SES message ${ses.mail.messageId}`);
      const { recipients, ...receipt } = ses.receipt;
      const result = await ingest(await Body.transformToByteArray(), receipt, ses.mail.messageId, {
        ...ready.deps,
        policy: {
          maxBytes: ready.cfg.MAX_MESSAGE_BYTES,
          maxMimeLines: ready.cfg.MAX_MIME_LINES,
          maxMimeParts: ready.cfg.MAX_MIME_PARTS,
          maxBodyChars: ready.cfg.MAX_BODY_CHARS,
          maxHtmlChars: ready.cfg.MAX_HTML_CHARS,
          parseBudgetMs: ready.cfg.PARSE_BUDGET_MS,
          requireAuthenticatedSender: ready.cfg.REQUIRE_AUTHENTICATED_SENDER,
          ownAddresses: [ready.cfg.MAIL_FROM, ...recipients].map((a) => a.toLowerCase()),
        },
      });
      // No personal data at INFO: the reason code and the execution name identify the mail.
      logger.info('inbound mail', { ...result });
      // One EMF line per mail, so a rejection's reason is the dimension of its own count only.
      if (result.status === 'REJECTED') metrics.addDimensions({ reason: result.reason });
      metrics.addMetric(OUTCOME_METRIC[result.status], MetricUnit.Count, 1);
      publish();
      results.push(result);
    }
    return results;
  };
}

/** The step workflow's starter, or with dual mode one that follows the orchestration parameter per mail. */
function starterFor(cfg: z.infer<typeof IngressEnv>, tracer: ClientTracer, logger: Logger): ExecutionStarter {
  const sfn = tracer.captureAWSv3Client(new SFNClient({ endpoint: cfg.AWS_ENDPOINT_URL_SFN, region: cfg.AWS_REGION }));
  const steps = sfnStarter(sfn, cfg.STATE_MACHINE_ARN);
  if (!cfg.ORCHESTRATION_PARAMETER || !cfg.SINGLE_PROMPT_STATE_MACHINE_ARN) return steps;
  const store = ssmModeStore(
    tracer.captureAWSv3Client(new SSMClient({ region: cfg.AWS_REGION })),
    cfg.ORCHESTRATION_PARAMETER,
  );
  return routedStarter(
    () => store.get(),
    { steps, 'single-prompt': sfnStarter(sfn, cfg.SINGLE_PROMPT_STATE_MACHINE_ARN) },
    (mode) => {
      if (store.lastProblem) logger.warn(store.lastProblem);
      logger.info(`Orchestration: ${mode}`, { orchestration: mode });
    },
  );
}

function wire(env: Env, services: IngressServices, tracer: ClientTracer, logger: Logger) {
  const parsed = IngressEnv.safeParse(env);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new InvalidInputError(`ingress environment: ${issue.path.join('.')}: ${issue.message}`);
  }
  const cfg = parsed.data;
  const region = cfg.AWS_REGION;
  const dynamo = tracer.captureAWSv3Client(new DynamoDBClient({ endpoint: cfg.AWS_ENDPOINT_URL_DYNAMODB, region }));
  return {
    cfg,
    s3: services.s3 ?? tracer.captureAWSv3Client(new S3Client({ endpoint: cfg.AWS_ENDPOINT_URL_S3, region })),
    deps: {
      emails: services.emails ?? dynamoEmailStore(dynamo, cfg.EMAILS_TABLE),
      events: services.events ?? dynamoEventLog(dynamo, cfg.EVENTS_TABLE),
      starter: services.starter ?? starterFor(cfg, tracer, logger),
      replies:
        services.replies ??
        (cfg.REPLY_EVENT_BUS
          ? eventBridgeReplies(
              tracer.captureAWSv3Client(new EventBridgeClient({ endpoint: cfg.AWS_ENDPOINT_URL_EVENTBRIDGE, region })),
              cfg.REPLY_EVENT_BUS,
            )
          : undefined),
      clock: services.clock ?? (() => new Date()),
    },
  };
}

export const handler = createHandler(process.env);
