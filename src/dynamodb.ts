/**
 * `stepwise/dynamodb`: a tool's own DynamoDB store as the engine's stores write theirs. `documentClient` leaves
 * `undefined` attributes out; free-form JSON (any keys, numbers and depth, which DynamoDB's own types cannot all hold)
 * is kept as its text with `toStoredJson` and read back with `fromStoredJson`; `JsonObjectSchema` checks such an
 * object without copying it.
 *
 * @example
 * import { defineTool, requireEnv } from 'stepwise';
 * import { documentClient, toStoredJson } from 'stepwise/dynamodb';
 * import * as z from 'zod';
 *
 * export default defineTool({
 *   name: 'save_profile',
 *   description: 'Keep what the customer told us about themselves.',
 *   input: z.strictObject({ customerId: z.string(), profile: z.record(z.string(), z.unknown()) }),
 *   resources: { tables: { profiles: 'write' } },
 *   connect: (env, aws) => ({ doc: documentClient(aws.dynamo()), table: requireEnv(env, 'PROFILES_TABLE', 'save_profile') }),
 *   async run({ customerId, profile }, _ctx, { doc, table }) {
 *     await doc.put({ TableName: table, Item: { customerId, profile: toStoredJson(profile) } });
 *     return { saved: true };
 *   },
 * });
 */
export { documentClient, fromStoredJson, JsonObjectSchema, toStoredJson } from './core/dynamo-json.ts';
