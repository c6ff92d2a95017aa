import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SESv2Client } from '@aws-sdk/client-sesv2';
import type { Env } from '../lib/contracts.ts';
import { InvalidInputError } from '../lib/errors.ts';
import type { ClientTracer } from '../lib/observability.ts';
import { outboxMailer, sesMailer } from '../triggers/email/mail.ts';
import type { ToolPorts } from './ports.ts';
import { dynamoTicketStore } from '../workflows/warranty-email/tickets.ts';
import { dynamoIdempotencyStore } from './toolbox.ts';
import { dynamoRegistry, jsonFileRegistry } from '../workflows/warranty-email/registry.ts';

/**
 * The tool ports a step Lambda's environment describes. Each port is built on first use, so a
 * step only needs the variables of the tools it calls (least privilege: the extract step has no
 * table at all):
 *
 * - `check_warranty`: `WARRANTY_REGISTRY_FILE` (local JSON registry) or `WARRANTY_TABLE`
 * - `create_ticket`: `TICKETS_TABLE`, `IDEMPOTENCY_TABLE`
 * - `send_email`: `OUTBOX_FILE` (local outbox) or `MAIL_FROM` (SES), and `IDEMPOTENCY_TABLE`
 *
 * DynamoDB and SES endpoints come from `AWS_ENDPOINT_URL_DYNAMODB` / `AWS_ENDPOINT_URL_SESV2`.
 *
 * @param tracer wraps the SDK clients, so each call is an X-Ray subsegment. @default untraced clients
 */
export function toolPortsFromEnv(env: Env, tracer?: ClientTracer): ToolPorts {
  const need = (name: string): string => {
    const value = env[name];
    if (!value) throw new InvalidInputError(`this step's environment has no ${name}`);
    return value;
  };
  const traced = <C extends object>(client: C): C => tracer?.captureAWSv3Client(client) ?? client;
  let dynamo: DynamoDBClient | undefined;
  const dynamoClient = () => (dynamo ??= traced(new DynamoDBClient({ endpoint: env.AWS_ENDPOINT_URL_DYNAMODB, region: env.AWS_REGION })));
  const lazy = <T>(build: () => T) => {
    let value: T | undefined;
    return () => (value ??= build());
  };
  const registry = lazy(() =>
    env.WARRANTY_REGISTRY_FILE ? jsonFileRegistry(env.WARRANTY_REGISTRY_FILE) : dynamoRegistry(dynamoClient(), need('WARRANTY_TABLE')),
  );
  const tickets = lazy(() => dynamoTicketStore(dynamoClient(), need('TICKETS_TABLE')));
  const mailer = lazy(() =>
    env.OUTBOX_FILE
      ? outboxMailer(env.OUTBOX_FILE)
      : sesMailer(traced(new SESv2Client({ endpoint: env.AWS_ENDPOINT_URL_SESV2, region: env.AWS_REGION })), need('MAIL_FROM')),
  );
  const idempotency = lazy(() => dynamoIdempotencyStore(dynamoClient(), need('IDEMPOTENCY_TABLE')));
  return {
    get registry() {
      return registry();
    },
    get tickets() {
      return tickets();
    },
    get mailer() {
      return mailer();
    },
    get idempotency() {
      return idempotency();
    },
  };
}
