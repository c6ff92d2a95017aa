import { afterAll, beforeAll } from 'vitest';
import { dynamoSessionStore } from '../../../lambdas/workflows/turn-pipeline/session.ts';
import { sessionDynamoDb } from '../../../src/local/cloud/dynamodb-connection.ts';
import type { DynamoDbLocal } from '../../../src/local/cloud/dynamodb-local.ts';
import { createTable } from '../../runtime/tools/fixtures.ts';
import { sessionStoreConformance } from './session-store-conformance.ts';

let ddb: DynamoDbLocal;
/** This file's tables on the suite's shared emulator. */
const table = (name: string) => `${ddb.tablePrefix}${name}`;
beforeAll(async () => {
  ddb = await sessionDynamoDb();
  await createTable(ddb.client, table('Sessions'));
});
afterAll(async () => ddb?.stop());

sessionStoreConformance('dynamodb', (leaseMs) => dynamoSessionStore(ddb.client, table('Sessions'), leaseMs));
