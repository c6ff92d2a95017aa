/** `create_order_ticket`: the OrderTicketsTable, one ticket per (execution, step). */
import { createHash } from 'node:crypto';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';

export interface OrderTicket {
  id: string;
  orderNumber: string;
  summary: string;
  priority: 'normal' | 'high';
  /** Attachment names a person has to ask for again. */
  unreadable: string[];
  /** The verified sender (personal data). */
  customer: string;
  /** The Message-ID of the customer's thread. */
  thread: string;
  execution: string;
  createdAt: string;
}

export interface TicketStore {
  /** Store the ticket unless one with its id exists (a retried step): the first one stays. */
  create(ticket: OrderTicket): Promise<void>;
}

/** `TKT-` and 12 hex characters of (workflow, execution, step): a retry names the same ticket. */
export function ticketIdFor(workflow: string, execution: string, step: string): string {
  return `TKT-${createHash('sha256').update(`${workflow}\n${execution}\n${step}`).digest('hex').slice(0, 12).toUpperCase()}`;
}

/** OrderTicketsTable adapter (`pk = TICKET#<id>`, `sk = TICKET`), a conditional put. */
export function dynamoTicketStore(client: DynamoDBClient, tableName: string): TicketStore {
  const doc = DynamoDBDocumentClient.from(client);
  return {
    async create(ticket) {
      await doc
        .send(
          new PutCommand({
            TableName: tableName,
            Item: { pk: `TICKET#${ticket.id}`, sk: 'TICKET', ...ticket },
            ConditionExpression: 'attribute_not_exists(pk)',
          }),
        )
        .catch((e: Error) => {
          if (e.name !== 'ConditionalCheckFailedException') throw e;
        });
    },
  };
}

/** Evals: tickets kept in memory, one store per case. */
export function memoryTicketStore(): TicketStore & { tickets: Map<string, OrderTicket> } {
  const tickets = new Map<string, OrderTicket>();
  return {
    tickets,
    async create(ticket) {
      if (!tickets.has(ticket.id)) tickets.set(ticket.id, ticket);
    },
  };
}
