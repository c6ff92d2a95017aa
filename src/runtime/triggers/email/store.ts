/**
 * Where inbound email bodies live. The execution state carries only the `InboundEmail` record
 * (Step Functions caps state at 256 KB); steps that need the text read it here by `email.id`.
 */
import { ConditionalCheckFailedException, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import * as z from 'zod';
import type { InboundEmail } from '../../../definitions/workflow/inbound-email.ts';
import { InboundEmailSchema } from '../../../definitions/workflow/inbound-email.ts';

export interface StoredEmail {
  email: InboundEmail;
  body: string;
}

/** Email store port. */
export interface EmailStore {
  /** Store a body once: the first delivery of a mail wins, later puts of the same id change nothing. */
  put(email: InboundEmail, body: string): Promise<void>;
  get(id: string): Promise<StoredEmail | undefined>;
  /**
   * Claim a sender's Message-ID for one delivery (conditional write). Returns the id of the
   * delivery that holds the claim: `emailId` itself the first time (and on a retry of the same
   * delivery), the earlier delivery's id when the sender sent the same mail again.
   * @param key A digest of (sender, Message-ID); see `ingest`.
   */
  claimMessageId(key: string, emailId: string): Promise<string>;
}

const StoredItem = z.object({ email: InboundEmailSchema, body: z.string() });
const ClaimItem = z.object({ emailId: z.string().min(1) });

/**
 * DynamoDB adapter (EMAILS_TABLE; bodies at `pk = EMAIL#<id>`, `sk = EMAIL`; Message-ID claims at
 * `pk = MSGID#<digest>`, `sk = MSGID`). An item holds at most 400 KB,
 * which is why the ingress cuts bodies to `maxBodyChars` before storing them.
 */
export function dynamoEmailStore(client: DynamoDBClient, tableName: string): EmailStore {
  const doc = DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
  const key = (id: string) => ({ pk: `EMAIL#${id}`, sk: 'EMAIL' });
  return {
    async put(email, body) {
      try {
        await doc.send(
          new PutCommand({
            TableName: tableName,
            Item: { ...key(email.id), email, body },
            ConditionExpression: 'attribute_not_exists(pk)',
          }),
        );
      } catch (e) {
        if (!(e instanceof ConditionalCheckFailedException)) throw e;
      }
    },
    async get(id) {
      const { Item } = await doc.send(new GetCommand({ TableName: tableName, Key: key(id), ConsistentRead: true }));
      return Item && StoredItem.parse(Item);
    },
    async claimMessageId(claim, emailId) {
      try {
        await doc.send(
          new PutCommand({
            TableName: tableName,
            Item: { pk: `MSGID#${claim}`, sk: 'MSGID', emailId },
            ConditionExpression: 'attribute_not_exists(pk)',
            // The holder comes back with the refusal, so the write-only ingress role needs no read.
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          }),
        );
        return emailId;
      } catch (e) {
        if (!(e instanceof ConditionalCheckFailedException)) throw e;
        return ClaimItem.parse(e.Item && unmarshall(e.Item)).emailId;
      }
    },
  };
}

/** In-memory adapter with the same first-delivery-wins semantics: for evals and tests that run without DynamoDB. */
export function memoryEmailStore(): EmailStore {
  const items = new Map<string, StoredEmail>();
  const claims = new Map<string, string>();
  return {
    async put(email, body) {
      if (!items.has(email.id)) items.set(email.id, structuredClone({ email, body }));
    },
    async get(id) {
      const item = items.get(id);
      return item && structuredClone(item);
    },
    async claimMessageId(claim, emailId) {
      if (!claims.has(claim)) claims.set(claim, emailId);
      return claims.get(claim)!;
    },
  };
}
