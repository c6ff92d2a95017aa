/**
 * The local pipe's reader of a lifecycle table's stream on DynamoDB Local: an iterator the emulator gave out while the
 * shard was empty and refuses once the first record is in (TrimmedDataAccessException, nothing trimmed) is replaced by
 * one from the shard's start, so no record is lost; a refusal after records were read is a real one and is thrown.
 */
import { DescribeTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  DescribeStreamCommand,
  DynamoDBStreamsClient,
  GetRecordsCommand,
  GetShardIteratorCommand,
  TrimmedDataAccessException,
} from '@aws-sdk/client-dynamodb-streams';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { dynamoDbStreamSource } from '../../../src/local/cloud/outbox-pipe.ts';

const dynamo = mockClient(DynamoDBClient);
const streams = mockClient(DynamoDBStreamsClient);
afterEach(() => {
  dynamo.reset();
  streams.reset();
});
afterAll(() => {
  dynamo.restore();
  streams.restore();
});

const STREAM = 'arn:aws:dynamodb:us-east-1:000000000000:table/Leads/stream/1';
const trimmed = () =>
  new TrimmedDataAccessException({
    message: 'The operation attempted to read past the oldest stream record in a shard.',
    $metadata: {},
  });
const record = (seq: string) => ({
  eventID: `e${seq}`,
  eventName: 'INSERT' as const,
  dynamodb: { Keys: { pk: { S: `ENTITY#${seq}` } }, SequenceNumber: seq },
});

/** The table with one open shard, whose first iterator (TRIM_HORIZON) is `first`. */
function oneShard() {
  dynamo.on(DescribeTableCommand).resolves({ Table: { LatestStreamArn: STREAM } });
  streams.on(DescribeStreamCommand).resolves({ StreamDescription: { Shards: [{ ShardId: 'shard-1' }] } });
  streams
    .on(GetShardIteratorCommand, { ShardIteratorType: 'TRIM_HORIZON' })
    .resolvesOnce({ ShardIterator: 'first' })
    .resolves({ ShardIterator: 'from-start' });
}
const source = () =>
  dynamoDbStreamSource(new DynamoDBClient({ region: 'us-east-1' }), 'http://127.0.0.1:8000', 'Leads');

describe('the stream of a lifecycle table on DynamoDB Local', () => {
  it('reads a shard again from its start when the iterator it was given while empty is refused', async () => {
    oneShard();
    streams
      .on(GetRecordsCommand, { ShardIterator: 'first' })
      .resolvesOnce({ Records: [], NextShardIterator: 'first' })
      .rejects(trimmed());
    streams
      .on(GetRecordsCommand, { ShardIterator: 'from-start' })
      .resolves({ Records: [record('100'), record('101')], NextShardIterator: 'after-101' });
    streams
      .on(GetRecordsCommand, { ShardIterator: 'after-101' })
      .resolves({ Records: [], NextShardIterator: 'after-101' });

    const stream = await source(); // reads what is there now (nothing) to start after it
    expect((await stream.read()).map((r) => r.dynamodb.SequenceNumber)).toEqual(['100', '101']);
    expect(await stream.read()).toEqual([]);
  });

  it('throws a refusal that comes after a record was read', async () => {
    oneShard();
    streams
      .on(GetRecordsCommand, { ShardIterator: 'first' })
      .resolvesOnce({ Records: [record('100')], NextShardIterator: 'after-100' });
    streams.on(GetRecordsCommand, { ShardIterator: 'after-100' }).rejects(trimmed());

    await expect(source()).rejects.toThrow(TrimmedDataAccessException);
  });
});
