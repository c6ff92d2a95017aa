import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { BatchGetCommand, DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { conflictBackoffMs, dynamoLifecycleStore, memoryLifecycleStore } from '../../../src/runtime/lifecycle/store.ts';
import { initialSnapshot } from '../../../src/runtime/lifecycle/transition.ts';
import { describeLifecycleStore } from './store-conformance.ts';
import { def } from './support.ts';

const store = memoryLifecycleStore();
describeLifecycleStore('memory', () => store);

describe('conflictBackoffMs', () => {
  it('waits nothing before the first read, then draws from a window that doubles up to a cap', () => {
    expect(conflictBackoffMs(0, () => 0.99)).toBe(0);
    expect([1, 2, 3, 4].map((a) => conflictBackoffMs(a, () => 0.999))).toEqual([49, 99, 199, 399]);
    expect(conflictBackoffMs(20, () => 0.999)).toBe(999);
    expect(conflictBackoffMs(5, () => 0)).toBe(0);
  });
});

describe('dynamoLifecycleStore.load', () => {
  const doc = mockClient(DynamoDBDocumentClient);
  afterEach(() => {
    doc.reset();
    vi.useRealTimers();
  });
  afterAll(() => doc.restore());
  const key = (sk: string) => ({ pk: 'ENTITY#l1', sk });
  const snapshot = { ...initialSnapshot(def), eventCount: 1, version: 2 };
  const members = () => dynamoLifecycleStore(new DynamoDBClient({ region: 'eu-west-1' }), 'members');

  it('reads the projection and the event id marker in one consistent BatchGetItem, asking again for keys left unprocessed', async () => {
    doc
      .on(BatchGetCommand)
      .resolvesOnce({
        Responses: { members: [{ ...key('STATE'), entityId: 'l1', ...snapshot }] },
        UnprocessedKeys: { members: { Keys: [key('ID#e1')], ConsistentRead: true } },
      })
      .resolvesOnce({ Responses: { members: [{ ...key('ID#e1'), seq: 1 }] } });
    expect(await members().load('l1', 'e1')).toEqual({ snapshot, duplicate: true });
    expect(doc.commandCalls(BatchGetCommand).map((c) => c.args[0].input.RequestItems)).toEqual([
      { members: { Keys: [key('STATE'), key('ID#e1')], ConsistentRead: true } },
      { members: { Keys: [key('ID#e1')], ConsistentRead: true } },
    ]);
    expect(doc.commandCalls(GetCommand)).toEqual([]);
  });

  it('fails when DynamoDB still leaves keys unprocessed after 5 requests', async () => {
    vi.useFakeTimers();
    doc.on(BatchGetCommand).resolves({ UnprocessedKeys: { members: { Keys: [key('STATE')], ConsistentRead: true } } });
    const loading = expect(members().load('l1', 'e1')).rejects.toThrow(/unprocessed after 5 BatchGetItem requests/);
    await vi.runAllTimersAsync();
    await loading;
    expect(doc.commandCalls(BatchGetCommand)).toHaveLength(5);
  });
});
