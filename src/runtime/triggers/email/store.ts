/**
 * Where inbound email bodies live. The execution state carries only the `InboundEmail` record
 * (Step Functions caps state at 256 KB); steps that need the text read it here by `email.id`.
 */
import { createHash } from 'node:crypto';
import { ConditionalCheckFailedException, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import * as z from 'zod';
import type { InboundEmail } from '../../../definitions/workflow/inbound-email.ts';
import { InboundEmailSchema } from '../../../definitions/workflow/inbound-email.ts';

export interface StoredEmail {
  email: InboundEmail;
  body: string;
}

/**
 * The first inbound mail with a Message-ID, which a reply names in In-Reply-To/References: who
 * sent it, and whether another sender's mail came in with the same Message-ID since (then which
 * of them a reply answers cannot be told, and none is delivered).
 */
export interface Thread {
  messageId: string;
  from: string;
  emailId: string;
  contested: boolean;
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
  /**
   * Record a mail that started an execution as the first of its thread: the first sender of a
   * Message-ID keeps it; a later one with another sender marks the thread contested.
   */
  claimThread(messageId: string, from: string, emailId: string): Promise<void>;
  /** The thread a Message-ID opened, if an accepted mail had it. */
  thread(messageId: string): Promise<Thread | undefined>;
}

/** The partition of a thread's items: Message-IDs are long outside text, so they are hashed. */
export const threadKey = (messageId: string): string =>
  `THREAD#${createHash('sha256').update(messageId).digest('hex')}`;

const StoredItem = z.object({ email: InboundEmailSchema, body: z.string() });
const ClaimItem = z.object({ emailId: z.string().min(1) });
const ThreadItem = z.object({ messageId: z.string(), from: z.string(), emailId: z.string() });

/**
 * DynamoDB adapter (EMAILS_TABLE; bodies at `pk = EMAIL#<id>`, `sk = EMAIL`; Message-ID claims at
 * `pk = MSGID#<digest>`, `sk = MSGID`; threads at `pk = THREAD#<digest>`, `sk = THREAD`, with an
 * `sk = CONTESTED` item once contested: puts only, like the rest). An item holds at most 400 KB,
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
    async claimThread(messageId, from, emailId) {
      const pk = threadKey(messageId);
      try {
        await doc.send(
          new PutCommand({
            TableName: tableName,
            Item: { pk, sk: 'THREAD', messageId, from, emailId },
            ConditionExpression: 'attribute_not_exists(pk)',
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          }),
        );
      } catch (e) {
        if (!(e instanceof ConditionalCheckFailedException)) throw e;
        if (ThreadItem.parse(e.Item && unmarshall(e.Item)).from !== from)
          await doc.send(new PutCommand({ TableName: tableName, Item: { pk, sk: 'CONTESTED' } }));
      }
    },
    async thread(messageId) {
      const { Items = [] } = await doc.send(
        new QueryCommand({
          TableName: tableName,
          KeyConditionExpression: 'pk = :pk',
          ExpressionAttributeValues: { ':pk': threadKey(messageId) },
          ConsistentRead: true,
        }),
      );
      const first = Items.find((i) => i.sk === 'THREAD');
      return first && { ...ThreadItem.parse(first), contested: Items.some((i) => i.sk === 'CONTESTED') };
    },
  };
}

/** In-memory adapter with the same first-delivery-wins semantics: for evals and tests that run without DynamoDB. */
export function memoryEmailStore(): EmailStore {
  const items = new Map<string, StoredEmail>();
  const claims = new Map<string, string>();
  const threads = new Map<string, Thread>();
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
    async claimThread(messageId, from, emailId) {
      const held = threads.get(messageId);
      if (!held) threads.set(messageId, { messageId, from, emailId, contested: false });
      else if (held.from !== from) held.contested = true;
    },
    async thread(messageId) {
      const held = threads.get(messageId);
      return held && { ...held };
    },
  };
}
