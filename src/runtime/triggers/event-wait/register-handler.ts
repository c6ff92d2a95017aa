/**
 * The function an event step's `.waitForTaskToken` Task invokes: records the task token under the
 * execution's correlation key in the token table (see ./waits.ts) and returns; the Task waits on
 * until the resumer sends `SendTaskSuccess` or its `TimeoutSeconds` run out.
 */
import * as z from 'zod';
import type { Env } from '../../../core/env.ts';
import { InvalidInputError } from '../../../core/errors.ts';
import { envWaitTable } from './table.ts';
import { EventWaitRequestSchema, registerWait, type WaitTable } from './waits.ts';

const RegisterEnv = z.object({
  WAITS_TABLE: z.string().min(1),
  AWS_REGION: z.string().optional(),
  AWS_ENDPOINT_URL_DYNAMODB: z.string().optional(),
});

export function createHandler(env: Env, services: { table?: WaitTable; clock?: () => Date } = {}) {
  const cfg = RegisterEnv.parse(env);
  const table = services.table ?? envWaitTable(cfg);
  return async (event: unknown): Promise<{ registered: string }> => {
    const parsed = EventWaitRequestSchema.safeParse(event);
    if (!parsed.success) throw new InvalidInputError(`not an event wait: ${parsed.error.issues[0]!.message}`);
    const record = await registerWait(parsed.data, table, services.clock?.() ?? new Date());
    return { registered: record.pk };
  };
}

let ready: ReturnType<typeof createHandler> | undefined;
/** Built on the first invocation, so importing this module never fails. */
export const handler = (event: unknown) => {
  ready ??= createHandler(process.env);
  return ready(event);
};
