/**
 * Which DynamoDB Local a session uses: one named by `STEPWISE_DYNAMODB_ENDPOINT` (a test suite's shared
 * emulator), the warm local service (the CLI's commands), or an emulator of its own (the default for code that
 * calls the sessions directly). On a shared emulator each connection names its tables with a prefix of its own and
 * drops them when it stops, so concurrent sessions never see each other's data.
 */
import { randomBytes } from 'node:crypto';
import { DeleteTableCommand, DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { LocalServiceError } from '../../core/errors.ts';
import { type DynamoDbLocal, startDynamoDbLocal } from './dynamodb-local.ts';
import { localServiceEnabled, useLocalService } from './local-service.ts';

/** Set it to a running DynamoDB Local (`http://127.0.0.1:8000`) and every session uses that one. */
export const DYNAMODB_ENDPOINT_VARIABLE = 'STEPWISE_DYNAMODB_ENDPOINT';

/**
 * Connect to a DynamoDB Local someone else started and stops. The handle's `tablePrefix` is unique; its `stop()`
 * drops the tables with that prefix and closes the client, and leaves the emulator running.
 * @throws LocalServiceError when nothing answers ListTables at `endpoint`.
 */
export async function connectDynamoDbLocal(
  endpoint: string,
  options: { region?: string; onStop?: () => void | Promise<void> } = {},
): Promise<DynamoDbLocal> {
  const started = Date.now();
  const client = new DynamoDBClient({
    endpoint,
    region: options.region ?? 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  try {
    await client.send(new ListTablesCommand({ Limit: 1 }));
  } catch (e) {
    client.destroy();
    throw new LocalServiceError(`no DynamoDB Local answers at ${endpoint}: ${(e as Error).message}`, { cause: e });
  }
  const tablePrefix = `sw${randomBytes(5).toString('hex')}.`;
  let stopping: Promise<void> | undefined;
  return {
    endpoint,
    client,
    startupMs: Date.now() - started,
    tablePrefix,
    stop: () =>
      (stopping ??= (async () => {
        try {
          await dropTables(client, tablePrefix);
        } finally {
          client.destroy();
          await options.onStop?.();
        }
      })()),
  };
}

/** Drop every table whose name starts with `prefix`; an emulator that is already gone has none left. */
async function dropTables(client: DynamoDBClient, prefix: string): Promise<void> {
  const names: string[] = [];
  try {
    let start: string | undefined;
    do {
      const page = await client.send(new ListTablesCommand({ ExclusiveStartTableName: start }));
      names.push(...(page.TableNames ?? []).filter((n) => n.startsWith(prefix)));
      start = page.LastEvaluatedTableName;
    } while (start);
  } catch {
    return;
  }
  await Promise.allSettled(names.map((TableName) => client.send(new DeleteTableCommand({ TableName }))));
}

/**
 * The DynamoDB Local of a new session: `STEPWISE_DYNAMODB_ENDPOINT` when set, else the warm local service when
 * this process uses it (`useLocalService`), else a new emulator of the session's own.
 * @throws JavaNotFoundError when an emulator must start and Java 17+ is missing.
 */
export async function sessionDynamoDb(env: NodeJS.ProcessEnv = process.env): Promise<DynamoDbLocal> {
  const endpoint = env[DYNAMODB_ENDPOINT_VARIABLE];
  if (endpoint) return connectDynamoDbLocal(endpoint);
  if (localServiceEnabled()) {
    const lease = await useLocalService();
    try {
      return await connectDynamoDbLocal(lease.endpoint, { onStop: lease.release });
    } catch (e) {
      lease.release();
      throw e;
    }
  }
  return startDynamoDbLocal();
}

/**
 * A test suite's global setup (vitest `globalSetup`): one DynamoDB Local for the whole run, named by
 * `STEPWISE_DYNAMODB_ENDPOINT`, which every session of every test file (and every CLI the tests start) connects to
 * with tables of its own instead of starting a JVM each. Keeps an emulator the environment already names.
 * @returns the teardown that stops it.
 */
export async function shareDynamoDbLocal(env: NodeJS.ProcessEnv = process.env): Promise<() => Promise<void>> {
  if (env[DYNAMODB_ENDPOINT_VARIABLE]) return async () => undefined;
  // Several test workers at once: a larger heap than one session's emulator.
  const ddb = await startDynamoDbLocal({ jvmOptions: ['-Xmx1g', '-XX:TieredStopAtLevel=1', '-XX:+UseSerialGC'] });
  env[DYNAMODB_ENDPOINT_VARIABLE] = ddb.endpoint;
  return async () => {
    delete env[DYNAMODB_ENDPOINT_VARIABLE];
    await ddb.stop();
  };
}
