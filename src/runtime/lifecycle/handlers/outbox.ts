/**
 * The outbox publisher: the enrichment of the EventBridge Pipe from a lifecycle table's stream to
 * its bus. Pipes hands it a batch of stream records (already filtered to new outbox items); it
 * returns, in order, the state change detail of each, which the pipe puts on the bus
 * (detail-type `<entity>.state_changed`, source `stepwise.lifecycle`). A record that is not a valid
 * outbox item fails the batch: the pipe retries, bisects and finally dead-letters it, so nothing
 * is skipped silently.
 */
import { unmarshall } from '@aws-sdk/util-dynamodb';
import * as z from 'zod';
import type { Env } from '../../../core/env.ts';
import { InvalidInputError } from '../../../core/errors.ts';
import { type StateChangedDetail, StateChangedDetailSchema } from '../state-changes.ts';
import { OUTBOX_SK_PREFIX } from '../store.ts';
import { parseInput } from './services.ts';

const StreamRecords = z.array(
  z.looseObject({
    eventName: z.enum(['INSERT', 'MODIFY', 'REMOVE']),
    dynamodb: z.looseObject({ NewImage: z.record(z.string(), z.unknown()) }),
  }),
);

/**
 * The state change details of a batch of outbox stream records, in order. @throws InvalidInputError for anything else.
 */
export function changesOf(records: unknown): StateChangedDetail[] {
  return parseInput(StreamRecords, records, 'outbox stream records').map((r, i) => {
    // The SDK types AttributeValue maps precisely; the records arrive as JSON.
    const item = unmarshall(r.dynamodb.NewImage as Parameters<typeof unmarshall>[0]) as Record<string, unknown>;
    if (r.eventName !== 'INSERT' || typeof item.sk !== 'string' || !item.sk.startsWith(OUTBOX_SK_PREFIX))
      throw new InvalidInputError(
        `outbox stream record ${i}: not a new outbox item (${r.eventName} ${String(item.sk)})`,
      );
    return parseInput(StateChangedDetailSchema, item.detail, `outbox item ${String(item.pk)}/${item.sk}`);
  });
}

export function createHandler(_env: Env) {
  return async (records: unknown): Promise<StateChangedDetail[]> => changesOf(records);
}

export const handler = createHandler(process.env);
