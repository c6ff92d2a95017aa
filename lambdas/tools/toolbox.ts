/**
 * The toolbox: validates a tool call, runs it against the ports, and makes side-effecting tools
 * idempotent in the scope their spec declares: per (workflow, execution, step, tool) for
 * `create_ticket`, per (workflow, execution, tool) for `send_email` (one reply per email, whichever
 * step sends it).
 *
 * Idempotency uses Powertools' `makeIdempotent` with its DynamoDB persistence layer: it does
 * exactly the conditional-put / in-progress / stored-result protocol this needs, and it deletes
 * the record when the call throws, so a failed send is retried for real (by a retry or by the
 * fallback) while a completed one is replayed. The key is built from the ToolContext (never from
 * the arguments): a retried step whose model words the mail differently still gets the first
 * result and sends nothing. A replayed result carries `replayed: true`.
 */
import type { Context } from 'aws-lambda';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { IdempotencyConfig, makeIdempotent } from '@aws-lambda-powertools/idempotency';
import { DynamoDBPersistenceLayer } from '@aws-lambda-powertools/idempotency/dynamodb';
import type { ToolCallRecord } from '../lib/contracts.ts';
import { ToolInputError, ToolNotAllowedError } from '../lib/errors.ts';
import { asUnavailable } from './aws-errors.ts';
import { replySubject } from '../triggers/email/mail.ts';
import type { ToolPorts } from './ports.ts';
import { toolSpec, type ToolArgs, type ToolName } from './specs.ts';
import { ticketIdFor } from '../workflows/warranty-email/tickets.ts';
import type { Toolbox, ToolContext, ToolSpec } from './types.ts';
import { normalizeSerial, warrantyStatus } from '../workflows/warranty-email/registry.ts';

export interface ToolboxOptions {
  /** Today's date for warranty status. @default () => new Date() */
  clock?: () => Date;
  /** How long a side-effecting call's result is remembered (IdempotencyTable TTL `expiresAt`). @default 86400 (one day; steps retry within minutes) */
  rememberSeconds?: number;
  /** Lock held by a running side-effecting call when the caller gives no `remainingTimeMs`. @default 60000 */
  lockMs?: number;
}

/** The idempotency persistence layer on IdempotencyTable (`pk = IDEMPOTENCY`, `sk = tool#<hash of the key>`, TTL `expiresAt`). */
export function dynamoIdempotencyStore(client: DynamoDBClient, tableName: string): DynamoDBPersistenceLayer {
  return new DynamoDBPersistenceLayer({
    tableName,
    keyAttr: 'pk',
    sortKeyAttr: 'sk',
    staticPkValue: 'IDEMPOTENCY',
    expiryAttr: 'expiresAt',
    awsSdkV3Client: client,
  });
}

type Impl<T extends ToolName> = (args: ToolArgs<T>, ctx: ToolContext) => Promise<Record<string, unknown>>;
/** What a side-effecting call is remembered by (hashed): never its arguments. `step` only for per-step tools. */
type IdempotencyKey = { workflow: string; execution: string; tool: string; step?: string };

/** Build the toolbox over the given ports. Ports are touched only when their tool runs. */
export function createToolbox(ports: ToolPorts, opts: ToolboxOptions = {}): Toolbox {
  const clock = opts.clock ?? (() => new Date());
  const rememberSeconds = opts.rememberSeconds ?? 86_400;
  const lockMs = opts.lockMs ?? 60_000;

  const impls: { [T in ToolName]: Impl<T> } = {
    async check_warranty({ serialNumber }) {
      const serial = normalizeSerial(serialNumber);
      const entry = await ports.registry.lookup(serial);
      const status = warrantyStatus(entry, clock());
      return entry ? { serialNumber: serial, status, product: entry.product, warrantyEnd: entry.warrantyEnd } : { serialNumber: serial, status };
    },
    async create_ticket(args, ctx) {
      const ticket = await ports.tickets.create({
        id: ticketIdFor(ctx.workflow, ctx.execution.name, ctx.step),
        serialNumber: normalizeSerial(args.serialNumber),
        ...(args.product ? { product: args.product } : {}),
        issueSummary: args.issueSummary,
        priority: args.priority ?? 'normal',
        customer: ctx.email.from,
        emailId: ctx.email.id,
        execution: ctx.execution.name,
        step: ctx.step,
        createdAt: clock().toISOString(),
      });
      return { ticketId: ticket.id, status: 'open' };
    },
    async send_email(args, ctx) {
      // The recipient is the verified sender of the inbound mail, whatever the model wrote.
      const to = ctx.email.from;
      const { messageId } = await ports.mailer.send({
        to,
        subject: replySubject(ctx.email.subject, args.subject),
        body: args.body,
        ...(ctx.email.messageId ? { inReplyTo: ctx.email.messageId } : {}),
        execution: ctx.execution.name,
        step: ctx.step,
      });
      return { sent: true, to, messageId };
    },
  };

  const run = (name: ToolName, args: unknown, ctx: ToolContext) => (impls[name] as Impl<ToolName>)(args as never, ctx);

  const runOnce = (scope: NonNullable<ToolSpec['idempotency']>, name: ToolName, args: unknown, ctx: ToolContext) => {
    // One config per call: it carries this call's remaining time, which bounds the in-progress lock.
    const config = new IdempotencyConfig({
      expiresAfterSeconds: rememberSeconds,
      responseHook: (stored) => ({ ...(stored as Record<string, unknown>), replayed: true }),
    });
    config.registerLambdaContext({ getRemainingTimeInMillis: ctx.remainingTimeMs ?? (() => lockMs) } as Context);
    const once = makeIdempotent((_key: IdempotencyKey) => run(name, args, ctx), { persistenceStore: ports.idempotency, config, keyPrefix: 'tool' });
    const key: IdempotencyKey = { workflow: ctx.workflow, execution: ctx.execution.name, tool: name };
    return once(scope === 'step' ? { ...key, step: ctx.step } : key);
  };

  return {
    spec: toolSpec,
    async execute(name, args, ctx): Promise<ToolCallRecord> {
      const given = typeof args === 'object' && args !== null && !Array.isArray(args) ? (args as Record<string, unknown>) : {};
      const spec = toolSpec(name);
      if (!spec) return { tool: name, args: given, error: `${ToolNotAllowedError.name}: unknown tool "${name}"` };
      const parsed = spec.input.safeParse(args);
      if (!parsed.success) {
        const issue = parsed.error.issues[0]!;
        return { tool: name, args: given, error: `${ToolInputError.name}: ${issue.path.join('.') || 'args'}: ${issue.message}` };
      }
      const toolName = name as ToolName;
      try {
        const result = await (spec.idempotency ? runOnce(spec.idempotency, toolName, parsed.data, ctx) : run(toolName, parsed.data, ctx));
        return { tool: name, args: parsed.data, result };
      } catch (e) {
        const unavailable = asUnavailable(name, e);
        if (unavailable) throw unavailable;
        return { tool: name, args: parsed.data, error: `${(e as Error).name}: ${(e as Error).message}` };
      }
    },
  };
}
