import { afterAll, beforeAll } from 'vitest';
import { sessionDynamoDb } from '../../../src/local/cloud/dynamodb-connection.ts';
import type { DynamoDbLocal } from '../../../src/local/cloud/dynamodb-local.ts';
import { dynamoEventLog } from '../../../src/runtime/event-log.ts';
import { createTable } from '../tools/fixtures.ts';
import { eventLogConformance } from './conformance.ts';

let ddb: DynamoDbLocal;
/** This file's tables on the suite's shared emulator. */
const table = (name: string) => `${ddb.tablePrefix}${name}`;
beforeAll(async () => {
  ddb = await sessionDynamoDb();
  await createTable(ddb.client, table('Events'));
});
afterAll(async () => ddb?.stop());

eventLogConformance('dynamodb', () => dynamoEventLog(ddb.client, table('Events')));
