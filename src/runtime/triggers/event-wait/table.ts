/**
 * The token table of event steps in DynamoDB: partition key `pk`, TTL attribute `expiresAt`.
 * A wait is `wait#<workflow>#<step>#<key>`; an event that resumed nothing is kept as
 * `event#<event id>#<step>` with its reason for 30 days.
 */
import {
  ConditionalCheckFailedException,
  DeleteItemCommand,
  DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
} from '@aws-sdk/client-dynamodb';
import type { ArrivedEvent, EventOutcome, WaitRecord, WaitTable } from './waits.ts';

/** How long an event that resumed nothing is kept. */
const UNMATCHED_DAYS = 30;

const conditional = async (write: () => Promise<unknown>): Promise<boolean> => {
  try {
    await write();
    return true;
  } catch (e) {
    if (e instanceof ConditionalCheckFailedException || (e as Error).name === 'ConditionalCheckFailedException')
      return false;
    throw e;
  }
};

/** The task-token table a function's environment names (`WAITS_TABLE`), in DynamoDB of its region (or endpoint). */
export function envWaitTable(env: {
  WAITS_TABLE: string;
  AWS_REGION?: string;
  AWS_ENDPOINT_URL_DYNAMODB?: string;
}): WaitTable {
  return dynamoWaitTable(
    new DynamoDBClient({ endpoint: env.AWS_ENDPOINT_URL_DYNAMODB, region: env.AWS_REGION }),
    env.WAITS_TABLE,
  );
}

export function dynamoWaitTable(client: DynamoDBClient, tableName: string): WaitTable {
  return {
    put: (record, now) =>
      conditional(() =>
        client.send(
          new PutItemCommand({
            TableName: tableName,
            Item: {
              pk: { S: record.pk },
              taskToken: { S: record.taskToken },
              execution: { S: record.execution },
              expiresAt: { N: String(record.expiresAt) },
            },
            // A record past its deadline is free to take over (TTL deletes it late).
            ConditionExpression: 'attribute_not_exists(pk) OR expiresAt <= :now',
            ExpressionAttributeValues: { ':now': { N: String(Math.floor(now.getTime() / 1000)) } },
          }),
        ),
      ),
    async get(pk) {
      const { Item } = await client.send(
        new GetItemCommand({ TableName: tableName, Key: { pk: { S: pk } }, ConsistentRead: true }),
      );
      if (!Item?.taskToken?.S || !Item.execution?.S || !Item.expiresAt?.N) return undefined;
      return { pk, taskToken: Item.taskToken.S, execution: Item.execution.S, expiresAt: Number(Item.expiresAt.N) };
    },
    take: (pk, taskToken) =>
      conditional(() =>
        client.send(
          new DeleteItemCommand({
            TableName: tableName,
            Key: { pk: { S: pk } },
            ConditionExpression: 'taskToken = :token',
            ExpressionAttributeValues: { ':token': { S: taskToken } },
          }),
        ),
      ),
    async recordUnmatched(outcome: EventOutcome, event: ArrivedEvent, now: Date) {
      const reason = outcome.outcome === 'unmatched' ? outcome.reason : 'resumed';
      await client.send(
        new PutItemCommand({
          TableName: tableName,
          Item: {
            pk: { S: `event#${event.id}#${outcome.step ?? '-'}` },
            reason: { S: reason },
            source: { S: event.source },
            detailType: { S: event['detail-type'] },
            ...(outcome.key !== undefined && { key: { S: outcome.key } }),
            ...(outcome.execution && { execution: { S: outcome.execution } }),
            detail: { S: JSON.stringify(event.detail) },
            receivedAt: { S: now.toISOString() },
            expiresAt: { N: String(Math.floor(now.getTime() / 1000) + UNMATCHED_DAYS * 86_400) },
          },
        }),
      );
    },
  };
}

/** @internal the shape of a record, for tests */
export type { WaitRecord };
