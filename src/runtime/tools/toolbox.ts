/**
 * The toolbox: validates a tool call, runs the workflow's tool module, and makes side-effecting
 * tools idempotent in the scope their definition declares: per (workflow, execution, step, tool)
 * or per (workflow, execution, tool).
 *
 * Idempotency uses Powertools' `makeIdempotent` with its DynamoDB persistence layer: it does
 * exactly the conditional-put / in-progress / stored-result protocol this needs, and it deletes
 * the record when the call throws, so a failed call is retried for real (by a retry or by the
 * fallback) while a completed one is replayed. The key is built from the ToolContext (never from
 * the arguments): a retried step whose model words a mail differently still gets the first
 * result and sends nothing. A replayed result carries `replayed: true`.
 */

import type { BasePersistenceLayer } from '@aws-lambda-powertools/idempotency/persistence';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { Env } from '../../core/env.ts';
import { InvalidInputError, ToolNotAllowedError } from '../../core/errors.ts';
import { lazy } from '../../core/lazy.ts';
import type { ToolCallRecord } from '../contracts/step.ts';
import type { ClientTracer } from '../observability.ts';
import { asUnavailable } from './aws-errors.ts';
import { parsedArgs, refusedArgs } from './refusals.ts';
import type { AwsClients, Toolbox, ToolContext, ToolDefinition } from './types.ts';

export interface ToolboxOptions {
  /**
   * The function's environment: tools build their adapters from it (`connect`), idempotency uses `IDEMPOTENCY_TABLE`.
   * @default {}
   */
  env?: Env;
  /** Wraps the SDK clients, so each call is an X-Ray subsegment. @default untraced clients */
  tracer?: ClientTracer;
  /** Where side-effecting calls remember their result. @default DynamoDB `IDEMPOTENCY_TABLE` */
  idempotency?: BasePersistenceLayer;
  /** `ToolContext.now`. @default () => new Date() */
  clock?: () => Date;
  /**
   * How long a side-effecting call's result is remembered (IdempotencyTable TTL `expiresAt`). @default 86400 (one day;
   * steps retry within minutes)
   */
  rememberSeconds?: number;
  /** Lock held by a running side-effecting call when the caller gives no `remainingTimeMs`. @default 60000 */
  lockMs?: number;
}

/** The SDK clients of one function, built on first use (a tool that needs no AWS resource builds none). */
export function awsClients(env: Env, tracer?: ClientTracer): AwsClients {
  const traced = <C extends object>(client: C): C => tracer?.captureAWSv3Client(client) ?? client;
  return {
    dynamo: lazy(() => traced(new DynamoDBClient({ endpoint: env.AWS_ENDPOINT_URL_DYNAMODB, region: env.AWS_REGION }))),
    traced,
    region: env.AWS_REGION,
  };
}

/** A required environment variable of a tool's adapter, with a message that names the tool's resources. */
export function requireEnv(env: Env, name: string, tool: string): string {
  const value = env[name];
  if (!value)
    throw new InvalidInputError(
      `tool ${tool}: this function's environment has no ${name} (is the tool on the step's allow-list, and its resources declared?)`,
    );
  return value;
}

/**
 * Build the toolbox over a workflow's tools. A tool's adapters (`connect`) are built on its first
 * call, so a step only needs the environment of the tools it calls.
 */
export function createToolbox(tools: readonly ToolDefinition[], opts: ToolboxOptions = {}): Toolbox {
  const env = opts.env ?? {};
  const clock = opts.clock ?? (() => new Date());
  const rememberSeconds = opts.rememberSeconds ?? 86_400;
  const lockMs = opts.lockMs ?? 60_000;
  const aws = awsClients(env, opts.tracer);
  const byName = new Map(tools.map((tool) => [tool.name, tool]));
  const ports = new Map<string, () => unknown>(tools.map((tool) => [tool.name, lazy(() => tool.connect?.(env, aws))]));
  // Powertools' idempotency is loaded by the first side-effecting call: a workflow without one never loads it.
  const once = lazy(() => import('./once.ts'));
  const idempotency = lazy(
    async () =>
      opts.idempotency ??
      (await once()).dynamoIdempotencyStore(aws.dynamo(), requireEnv(env, 'IDEMPOTENCY_TABLE', 'idempotency')),
  );

  const run = (tool: ToolDefinition, args: unknown, ctx: ToolContext) =>
    tool.run(args as never, ctx, ports.get(tool.name)!());

  const runOnce = async (
    tool: ToolDefinition,
    scope: NonNullable<ToolDefinition['idempotency']>,
    args: unknown,
    ctx: ToolContext,
  ) => {
    const key = {
      workflow: ctx.workflow,
      execution: ctx.execution.name,
      tool: tool.name,
      ...(ctx.item !== undefined && { item: ctx.item }),
    };
    return (await once()).callOnce(() => run(tool, args, ctx), scope === 'step' ? { ...key, step: ctx.step } : key, {
      store: await idempotency(),
      rememberSeconds,
      remainingTimeMs: ctx.remainingTimeMs ?? (() => lockMs),
    });
  };

  return {
    spec: (name) => byName.get(name),
    async execute(name, args, given): Promise<ToolCallRecord> {
      const ctx: ToolContext = { ...given, now: clock };
      const tool = byName.get(name);
      if (!tool)
        return { tool: name, args: refusedArgs(args), error: `${ToolNotAllowedError.name}: unknown tool "${name}"` };
      const parsed = parsedArgs(name, tool.input, args);
      if (parsed.refused) return parsed.refused;
      try {
        const result = await (tool.idempotency
          ? runOnce(tool, tool.idempotency, parsed.args, ctx)
          : run(tool, parsed.args, ctx));
        return { tool: name, args: parsed.args, result };
      } catch (e) {
        const unavailable = asUnavailable(name, e);
        if (unavailable) throw unavailable;
        return { tool: name, args: parsed.args, error: `${(e as Error).name}: ${(e as Error).message}` };
      }
    },
  };
}
