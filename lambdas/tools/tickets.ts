/** `create_ticket`: deterministic ticket ids and the DynamoDB ticket store. */
import { createHash } from 'node:crypto';
import { ConditionalCheckFailedException, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { Ticket, TicketStore } from './ports.ts';

// Crockford's base32: no I, L, O, U, so ids survive being read aloud or retyped.
const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/**
 * `TKT-` and 8 characters derived from (workflow, execution, step): the same step of the same
 * execution always names the same ticket, so even a retry that bypassed the idempotency record
 * could not open a second one.
 */
export function ticketIdFor(workflow: string, execution: string, step: string): string {
  const digest = createHash('sha256').update(`${workflow}\n${execution}\n${step}`).digest();
  let id = '';
  for (let i = 0; i < 8; i++) id += CROCKFORD[digest[i]! % 32];
  return `TKT-${id}`;
}

/** TicketsTable adapter (`pk = TICKET#<id>`, `sk = TICKET`); a conditional put keeps the first ticket. */
export function dynamoTicketStore(client: DynamoDBClient, tableName: string): TicketStore {
  const doc = DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
  return {
    async create(ticket) {
      const key = { pk: `TICKET#${ticket.id}`, sk: 'TICKET' };
      try {
        await doc.send(
          new PutCommand({ TableName: tableName, Item: { ...key, ...ticket }, ConditionExpression: 'attribute_not_exists(pk)' }),
        );
        return ticket;
      } catch (e) {
        if (!(e instanceof ConditionalCheckFailedException)) throw e;
        const { Item } = await doc.send(new GetCommand({ TableName: tableName, Key: key, ConsistentRead: true }));
        const { pk: _pk, sk: _sk, ...existing } = Item!;
        return existing as Ticket;
      }
    },
  };
}
