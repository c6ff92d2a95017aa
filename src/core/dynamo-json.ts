/**
 * How free-form JSON is stored in DynamoDB: an event's detail, a step's fields and tool arguments,
 * a conversation's variables. Such values come from outside (a CRM, a model) and may be any JSON,
 * which DynamoDB's own types cannot all hold: the SDK's marshaller throws on an object with a key
 * named `constructor` and on integers beyond 2^53, and drops an own `__proto__` key; DynamoDB
 * refuses numbers over 38 digits or beyond 1E+126, and maps nested deeper than 32 levels. So a
 * store keeps each free-form value as its JSON text in a string attribute ({@link toStoredJson}),
 * which gives back exactly the value written, whatever its keys, numbers or depth. Items written
 * before, with native maps, are still read ({@link fromStoredJson}). Engine-shaped records (keys,
 * versions, snapshots) stay native, so conditions and queries keep working on them.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod';

/**
 * A free-form JSON object, kept exactly as it came. zod's object and record schemas copy their
 * input and drop an own `__proto__` key; this one checks the shape and copies nothing.
 */
export const JsonObjectSchema = z.custom<Record<string, unknown>>(
  (v) => typeof v === 'object' && v !== null && !Array.isArray(v),
  'expected an object',
);

/** What a store writes for a free-form value: its JSON text. */
export function toStoredJson(value: unknown): string {
  return JSON.stringify(value);
}

/**
 * A free-form value as a store reads it back: parsed from its JSON text, or as it is when an older item stored it
 * natively.
 */
export function fromStoredJson(stored: unknown): unknown {
  return typeof stored === 'string' ? (JSON.parse(stored) as unknown) : stored;
}

/** The document client the stores share: engine-shaped attributes marshalled natively, `undefined` left out. */
export function documentClient(client: DynamoDBClient): DynamoDBDocumentClient {
  return DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
}
