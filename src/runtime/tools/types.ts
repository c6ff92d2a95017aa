import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type * as z from 'zod';
import type { Env } from '../../core/env.ts';
import type { ToolCallRecord } from '../contracts/step.ts';

/** Who is calling a tool: tools derive idempotency keys and recipients from this, never from model output. */
export interface ToolContext {
  workflow: string;
  step: string;
  execution: { id: string; name: string };
  /** The execution input as the trigger started it (for an email workflow `{ email }`, the verified ingress record). */
  input: Record<string, unknown>;
  /** Now, from the toolbox's clock (tests and evals pin it). */
  now: () => Date;
  /**
   * Time left in the calling Lambda (`context.getRemainingTimeInMillis`). It bounds the lock a
   * side-effecting call holds, so a retry after a crashed attempt is not blocked for the whole
   * idempotency window. Without it the toolbox uses its `lockMs` option.
   */
  remainingTimeMs?: () => number;
  /** Inside the items of a map step, `<map step>#<index>`: a side effect happens once per item, not once per step. */
  item?: string;
}

export type TableAccess = 'read' | 'write' | 'readWrite';

/**
 * The AWS resources a tool needs. The workflow's stack creates them and grants each step's role
 * exactly what the tools on the step's allow-list declare, and exposes them to the function as
 * environment variables.
 */
export interface ToolResources {
  /**
   * DynamoDB tables by name and the access the tool needs: `tickets` is the table `TicketsTable`,
   * read by the tool from `TICKETS_TABLE`. Tools naming the same table share it.
   */
  readonly tables?: Readonly<Record<string, TableAccess>>;
  /** `ses:SendEmail` from the environment's verified address only (`MAIL_FROM`). */
  readonly sendEmail?: boolean;
  /** EventBridge buses the tool puts events on (`events:PutEvents`), by name; the name is in `<NAME>_BUS`. */
  readonly buses?: readonly string[];
  /**
   * The environment's embedding model (`embeddings` in stepwise.config.ts): `EMBEDDINGS_PROVIDER` and
   * `EMBEDDINGS_MODEL_ID` are set, and `bedrock:InvokeModel` on that model granted (see `embeddingsFromEnv`).
   */
  readonly embeddings?: boolean;
}

/** Clients a tool's `connect` may build its adapters on, created once per function and traced. */
export interface AwsClients {
  dynamo(): DynamoDBClient;
  /** Wrap an SDK client so its calls are X-Ray subsegments. */
  traced<C extends object>(client: C): C;
  region?: string;
}

/**
 * A tool: a module `lambdas/workflows/<workflow>/tools/<name with - for _>.ts` whose default
 * export is `defineTool({...})`.
 *
 * @example
 * export default defineTool({
 *   name: 'lookup_customer',
 *   description: 'Find a customer by id.',
 *   input: z.strictObject({ customerId: z.string() }),
 *   personal: ['customerId'],
 *   resources: { tables: { customers: 'read' } },
 *   connect: (env, aws) => customerTable(aws.dynamo(), env.CUSTOMERS_TABLE!),
 *   run: async ({ customerId }, ctx, customers) => ({ customer: await customers.get(customerId) }),
 * });
 */
export interface ToolDefinition<I extends z.ZodObject = z.ZodObject, P = unknown> {
  /** snake_case, unique in the workflow; what the model calls. */
  readonly name: string;
  /** What the model is told the tool does. */
  readonly description: string;
  /** The arguments; its JSON Schema (less any argument a step binds from state) is what the model sees. */
  readonly input: I;
  /**
   * Set for a tool that changes the world: the toolbox runs it at most once per scope, and every
   * later call in the scope gets the first result back (with `replayed: true`) and does nothing.
   * `step`: once per (execution, step), so a retried step opens no second ticket. `execution`: once
   * per execution, whichever step calls it. A call that failed is not remembered.
   * @default no side effect: runs every time
   */
  readonly idempotency?: 'step' | 'execution';
  /** Arguments that are personal data: the event log drops them (it keeps the others). @default none */
  readonly personal?: readonly string[];
  /**
   * The argument that is text sent to the outside (a mail body): a successful call makes it the step's `reply`.
   * @default none
   */
  readonly replyArg?: string;
  /** @default none: the tool needs no AWS resource */
  readonly resources?: ToolResources;
  /**
   * Build what `run` needs from the function's environment (table names, `MAIL_FROM`, local files),
   * once per function, on the tool's first call.
   * @default no ports
   */
  readonly connect?: (env: Env, aws: AwsClients) => P;
  /**
   * In-memory ports for evals: a case that gives no mock for the tool runs it for real on these,
   * built fresh for each case (so a multi-turn case keeps state across its turns, and cases share none).
   * @default none: an eval case must mock the tool
   */
  readonly evalPorts?: () => P;
  /** Run the call with validated arguments. Throw for failures; transient AWS errors are retried by the ASL. */
  run(args: z.infer<I>, ctx: ToolContext, ports: P): Promise<Record<string, unknown>>;
}

/** Type helper for tool modules (the default export of `tools/<name>.ts`). */
export function defineTool<I extends z.ZodObject, P = undefined>(tool: ToolDefinition<I, P>): ToolDefinition<I, P> {
  return tool;
}

/** What a step sees of a tool: its name, description and (possibly narrowed) argument schema. */
export type ToolSpec = Pick<ToolDefinition, 'name' | 'description' | 'input' | 'idempotency' | 'personal' | 'replyArg'>;

/** The caller identity a step passes to the toolbox (which adds its clock as `now`). */
export type CallContext = Omit<ToolContext, 'now'>;

/** Executes known tools. The step runner enforces each step's allow-list before calling it. */
export interface Toolbox {
  spec(name: string): ToolSpec | undefined;
  /**
   * Validates `args` against the tool's schema and runs it; refusals and failures come back as `error`, transient
   * outages throw ToolUnavailableError.
   */
  execute(name: string, args: unknown, ctx: CallContext): Promise<ToolCallRecord>;
}

/**
 * The arguments the event log may keep: those the tool's schema declares and does not mark personal (an unknown
 * argument may carry anything).
 */
export function loggableArgs(
  spec: Pick<ToolSpec, 'personal' | 'input'>,
  args: Record<string, unknown>,
): Record<string, unknown> {
  const personal = new Set(spec.personal ?? []);
  return Object.fromEntries(
    Object.entries(args).filter(([k]) => Object.hasOwn(spec.input.shape, k) && !personal.has(k)),
  );
}

/** Tool names are snake_case; their modules are kebab-case files. */
export const toolModuleName = (tool: string): string => tool.replaceAll('_', '-');
