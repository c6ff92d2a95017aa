/** `create_ticket`: deterministic ticket ids and the DynamoDB ticket store. */
import { createHash } from 'node:crypto';
import { ConditionalCheckFailedException, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { StepwiseError } from 'stepwise';

/**
 * A ticket id is already taken by a ticket of another execution or step (an id collision): the
 * existing ticket is someone else's and is never returned. Permanent: the step reports that no
 * ticket was opened, and the customer is told a person will follow up.
 */
export class TicketConflictError extends StepwiseError {}

export interface Ticket {
  id: string;
  serialNumber: string;
  product?: string;
  issueSummary: string;
  priority: 'low' | 'normal' | 'high';
  /** The verified sender the ticket is for (personal data). */
  customer: string;
  emailId: string;
  execution: string;
  step: string;
  createdAt: string;
}

export interface TicketStore {
  /**
   * Create the ticket. When this execution's step already created it, return the stored one
   * unchanged; when the id belongs to another execution's or step's ticket, throw TicketConflictError.
   */
  create(ticket: Ticket): Promise<Ticket>;
}

// Crockford's base32: no I, L, O, U, so ids survive being read aloud or retyped.
const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
/** 12 characters of 5 bits each: among a million tickets, two share an id with a chance of about 1 in 2 million. */
const ID_CHARS = 12;

/**
 * `TKT-` and 12 characters derived from (workflow, execution, step): the same step of the same
 * execution always names the same ticket, so even a retry that bypassed the idempotency record
 * could not open a second one.
 */
export function ticketIdFor(workflow: string, execution: string, step: string): string {
  const digest = createHash('sha256').update(`${workflow}\n${execution}\n${step}`).digest();
  let id = '';
  for (let i = 0; i < ID_CHARS; i++) id += CROCKFORD[digest[i]! % 32];
  return `TKT-${id}`;
}

/**
 * TicketsTable adapter (`pk = TICKET#<id>`, `sk = TICKET`); a conditional put keeps the first
 * ticket. It needs write access only: when the id exists, the failed put returns the stored item
 * (`ReturnValuesOnConditionCheckFailure`), which is this call's ticket only if the same execution
 * and step opened it; an id collision with another customer's ticket throws TicketConflictError.
 */
export function dynamoTicketStore(client: DynamoDBClient, tableName: string): TicketStore {
  const doc = DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
  return {
    async create(ticket) {
      const key = { pk: `TICKET#${ticket.id}`, sk: 'TICKET' };
      try {
        await doc.send(
          new PutCommand({
            TableName: tableName,
            Item: { ...key, ...ticket },
            ConditionExpression: 'attribute_not_exists(pk)',
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          }),
        );
        return ticket;
      } catch (e) {
        if (!(e instanceof ConditionalCheckFailedException)) throw e;
        // The document client does not convert the item that comes with the error.
        const { pk: _pk, sk: _sk, ...existing } = e.Item ? unmarshall(e.Item) : {};
        if (existing.execution !== ticket.execution || existing.step !== ticket.step)
          throw new TicketConflictError(`ticket id ${ticket.id} is already taken by another request's ticket`);
        return existing as Ticket;
      }
    },
  };
}
