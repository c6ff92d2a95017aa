/**
 * The event store of a local lifecycle and the stream of its changes (what the outbox pipe reads): the stack's
 * table in DynamoDB Local, or, without Java, an in-memory store with the same semantics.
 */
import { DescribeTableCommand, ResourceNotFoundException } from '@aws-sdk/client-dynamodb';
import { dynamoLifecycleStore, type LifecycleStore, memoryLifecycleStore } from '../../runtime/lifecycle/store.ts';
import { sessionDynamoDb } from '../cloud/dynamodb-connection.ts';
import { createTablesFromTemplate, type DynamoDbLocal } from '../cloud/dynamodb-local.ts';
import type { CfnTemplate } from '../cloud/intrinsics.ts';
import { localTableName } from '../cloud/intrinsics.ts';
import { dynamoDbStreamSource, memoryStreamSource, type StreamSource } from '../cloud/outbox-pipe.ts';

/** A lifecycle's event store, the stream of its changes and where they are kept. */
export interface EventStore {
  store: LifecycleStore;
  stream: StreamSource;
  /** The emulator holding the table; undefined for the in-memory store. */
  dynamo: DynamoDbLocal | undefined;
  /** The DynamoDB Local this store connected to or started (`sessionDynamoDb`), for its session to stop. */
  ownedDynamo: DynamoDbLocal | undefined;
  /** The table's local name; undefined for the in-memory store. */
  tableName: string | undefined;
}

/** Where the store is kept (see `LifecycleSessionOptions`). */
export interface EventStoreOptions {
  store?: 'dynamodb-local' | 'memory';
  dynamo?: DynamoDbLocal;
}

/**
 * The store `options` asks for, with the table of `template`: in the given emulator, else in a session's own
 * (`sessionDynamoDb`: the suite's shared one, the warm local service or a new one; stopped again when the table
 * cannot be opened).
 * @throws JavaNotFoundError when the store is `dynamodb-local` and Java 17+ is missing.
 */
export async function openEventStore(options: EventStoreOptions, template: CfnTemplate): Promise<EventStore> {
  if (options.store === 'memory') {
    const store = memoryLifecycleStore();
    const stream = memoryStreamSource(store);
    return { store, stream, dynamo: undefined, ownedDynamo: undefined, tableName: undefined };
  }
  const ownedDynamo = options.dynamo ? undefined : await sessionDynamoDb();
  const dynamo = (options.dynamo ?? ownedDynamo)!;
  const tableName = tableNameOf(template, dynamo.tablePrefix);
  try {
    const store = await prepareTable(dynamo, template, tableName);
    const stream = await dynamoDbStreamSource(dynamo.client, dynamo.endpoint, tableName);
    return { store, stream, dynamo, ownedDynamo, tableName };
  } catch (e) {
    await ownedDynamo?.stop();
    throw e;
  }
}

/** The local name of the stack's (only) table. */
function tableNameOf(template: CfnTemplate, prefix: string): string {
  const [tableId, table] = Object.entries(template.Resources ?? {}).find(([, r]) => r.Type === 'AWS::DynamoDB::Table')!;
  return localTableName(tableId, table, prefix);
}

/** The stack's table in the emulator (created unless a session on the same emulator already did), as the store. */
async function prepareTable(dynamo: DynamoDbLocal, template: CfnTemplate, tableName: string): Promise<LifecycleStore> {
  if (!(await tableExists(dynamo, tableName)))
    await createTablesFromTemplate(dynamo.client, template, dynamo.tablePrefix);
  return dynamoLifecycleStore(dynamo.client, tableName);
}

async function tableExists(dynamo: DynamoDbLocal, TableName: string): Promise<boolean> {
  try {
    await dynamo.client.send(new DescribeTableCommand({ TableName }));
    return true;
  } catch (e) {
    if (e instanceof ResourceNotFoundException) return false;
    throw e;
  }
}
