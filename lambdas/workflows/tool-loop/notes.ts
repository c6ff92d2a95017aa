/**
 * The session's notes: a key-value store per session on the workflow's NotesTable
 * (`pk = SESSION#<sessionId>`, `sk = NOTE#<key>`). The session comes from the execution input,
 * never from the model, so a query cannot read or write another session's notes.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { ToolContext } from 'stepwise';
import { InvalidInputError } from 'stepwise';
import * as z from 'zod';

export interface NotesStore {
  get(session: string, key: string): Promise<string | undefined>;
  put(session: string, key: string, value: string, at: Date): Promise<void>;
}

/** A note key: lower-case words, so "Locker code" and "locker code" are one note. */
export const noteKey = (key: string): string => key.trim().toLowerCase().replace(/\s+/g, ' ');

const NoteItem = z.object({ value: z.string() });

export function dynamoNotes(client: DynamoDBClient, tableName: string): NotesStore {
  const doc = DynamoDBDocumentClient.from(client);
  const Key = (session: string, key: string) => ({ pk: `SESSION#${session}`, sk: `NOTE#${noteKey(key)}` });
  return {
    async get(session, key) {
      const { Item } = await doc.send(new GetCommand({ TableName: tableName, Key: Key(session, key) }));
      return Item ? NoteItem.parse(Item).value : undefined;
    },
    async put(session, key, value, at) {
      // Overwriting the same key with the same value is harmless: a retried call needs no idempotency record.
      await doc.send(
        new PutCommand({ TableName: tableName, Item: { ...Key(session, key), value, updatedAt: at.toISOString() } }),
      );
    },
  };
}

/** The calling execution's session (its input `sessionId`). */
export function sessionOf(ctx: Pick<ToolContext, 'input'>): string {
  const session = ctx.input.sessionId;
  if (typeof session !== 'string' || !session)
    throw new InvalidInputError('notes need a sessionId in the execution input');
  return session;
}

/**
 * The session's last turn output (`previousResponse`), kept by the workflow itself
 * under `sk = TURN#last`, beside the notes but out of the note tools' reach (they read `NOTE#`).
 */
export interface TurnMemory {
  get(session: string): Promise<unknown>;
  put(session: string, previous: unknown, at: Date): Promise<void>;
}

export function dynamoTurnMemory(client: DynamoDBClient, tableName: string): TurnMemory {
  const doc = DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
  const Key = (session: string) => ({ pk: `SESSION#${session}`, sk: 'TURN#last' });
  return {
    async get(session) {
      const { Item } = await doc.send(
        new GetCommand({ TableName: tableName, Key: Key(session), ConsistentRead: true }),
      );
      return Item?.previous;
    },
    async put(session, previous, at) {
      await doc.send(
        new PutCommand({ TableName: tableName, Item: { ...Key(session), previous, updatedAt: at.toISOString() } }),
      );
    },
  };
}

export function memoryTurnMemory(): TurnMemory {
  const items = new Map<string, unknown>();
  return {
    get: async (session) => structuredClone(items.get(session)),
    put: async (session, previous) => void items.set(session, structuredClone(previous)),
  };
}
