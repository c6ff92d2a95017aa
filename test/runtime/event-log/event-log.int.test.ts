import { afterAll, beforeAll } from 'vitest';
import { type DynamoDbLocal, startDynamoDbLocal } from '../../../src/local/dynamodb-local.ts';
import { dynamoEventLog } from '../../../src/runtime/event-log.ts';
import { createTable } from '../tools/fixtures.ts';
import { eventLogConformance } from './conformance.ts';

let ddb: DynamoDbLocal;
beforeAll(async () => {
  ddb = await startDynamoDbLocal();
  await createTable(ddb.client, 'Events');
});
afterAll(async () => ddb?.stop());

eventLogConformance('dynamodb', () => dynamoEventLog(ddb.client, 'Events'));
