/** The DynamoDB adapter against DynamoDB Local, with the table the lifecycle stack deploys. */
import { DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sessionDynamoDb } from '../../../src/local/cloud/dynamodb-connection.ts';
import { createTablesFromTemplate, type DynamoDbLocal } from '../../../src/local/cloud/dynamodb-local.ts';
import { dynamoLifecycleStore, type LifecycleStore } from '../../../src/runtime/lifecycle/store.ts';
import { lifecycleApp } from '../../local/sessions/lifecycle/support.ts';
import { describeLifecycleStore, freshMember, record } from './store-conformance.ts';

let ddb: DynamoDbLocal;
let store: LifecycleStore;
let table: string;

beforeAll(async () => {
  ddb = await sessionDynamoDb();
  const names = await createTablesFromTemplate(ddb.client, lifecycleApp().template, ddb.tablePrefix);
  table = Object.values(names)[0]!;
  store = dynamoLifecycleStore(ddb.client, table);
});
afterAll(() => ddb?.stop());

describeLifecycleStore('DynamoDB Local', () => store);

describe('DynamoDB layout', () => {
  it('keeps the projection, one item per event and a marker per trigger id under the member key', async () => {
    const member = freshMember();
    await record(store, { id: 'e1', entityId: member, type: 'agent.message_sent', time: '2025-01-06T09:00:00Z' });
    await record(store, { id: 'e2', entityId: member, type: 'call.booked', time: '2025-01-06T10:00:00Z' });
    const { Items: items = [] } = await DynamoDBDocumentClient.from(ddb.client).send(
      new QueryCommand({
        TableName: table,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': `ENTITY#${member}` },
      }),
    );
    expect(items.map((i) => i.sk)).toEqual([
      'EVT#0000000001',
      'EVT#0000000002',
      'EVT#0000000003',
      'ID#e1',
      'ID#e2',
      'STATE',
    ]);
    expect(items.find((i) => i.sk === 'ID#e2')).toEqual({ pk: `ENTITY#${member}`, sk: 'ID#e2', seq: 2 });
    expect(items.find((i) => i.sk === 'STATE')).toMatchObject({
      entityId: member,
      state: 'booked',
      eventCount: 3,
      lastEventTime: '2025-01-06T10:00:00Z',
    });
  });
});
