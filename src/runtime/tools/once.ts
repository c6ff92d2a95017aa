/**
 * Side-effecting tool calls run at most once per scope: Powertools' idempotency on IdempotencyTable. A module of its
 * own, loaded by the toolbox on the first such call.
 */
import { IdempotencyConfig, makeIdempotent } from '@aws-lambda-powertools/idempotency';
import { DynamoDBPersistenceLayer } from '@aws-lambda-powertools/idempotency/dynamodb';
import type { BasePersistenceLayer } from '@aws-lambda-powertools/idempotency/persistence';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { Context } from 'aws-lambda';

/** What a side-effecting call is remembered by (hashed): never its arguments. `step` only for per-step tools. */
export type IdempotencyKey = { workflow: string; execution: string; tool: string; step?: string; item?: string };

/**
 * The idempotency persistence layer on IdempotencyTable (`pk = IDEMPOTENCY`, `sk = tool#<hash of the key>`, TTL
 * `expiresAt`).
 */
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

/**
 * Run `call` once for `key`: a later call with the same key gets the first result back with `replayed: true`, and a
 * failed call is not remembered.
 */
export function callOnce(
  call: () => Promise<Record<string, unknown>>,
  key: IdempotencyKey,
  opts: { store: BasePersistenceLayer; rememberSeconds: number; remainingTimeMs: () => number },
): Promise<Record<string, unknown>> {
  // One config per call: it carries this call's remaining time, which bounds the in-progress lock.
  const config = new IdempotencyConfig({
    expiresAfterSeconds: opts.rememberSeconds,
    responseHook: (stored) => ({ ...(stored as Record<string, unknown>), replayed: true }),
  });
  config.registerLambdaContext({ getRemainingTimeInMillis: opts.remainingTimeMs } as Context);
  const once = makeIdempotent((_key: IdempotencyKey) => call(), {
    persistenceStore: opts.store,
    config,
    keyPrefix: 'tool',
  });
  return once(key);
}
