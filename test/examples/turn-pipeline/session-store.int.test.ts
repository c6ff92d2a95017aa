import { afterAll, beforeAll } from 'vitest';
import { dynamoSessionStore } from '../../../lambdas/workflows/turn-pipeline/session.ts';
import { type DynamoDbLocal, startDynamoDbLocal } from '../../../src/local/dynamodb-local.ts';
import { createTable } from '../../runtime/tools/fixtures.ts';
import { sessionStoreConformance } from './session-store-conformance.ts';

let ddb: DynamoDbLocal;
beforeAll(async () => {
  ddb = await startDynamoDbLocal();
  await createTable(ddb.client, 'Sessions');
});
afterAll(async () => ddb?.stop());

sessionStoreConformance('dynamodb', (leaseMs) => dynamoSessionStore(ddb.client, 'Sessions', leaseMs));
