import { defineTool, requireEnv } from 'stepwise';
import * as z from 'zod';
import { dynamoTurnMemory, memoryTurnMemory, sessionOf } from '../notes.ts';
import { PreviousResponseSchema } from '../state.ts';

/**
 * The session's previous turn output (NotesTable): `read` by 01-start-group, `write` by 05-respond,
 * so a caller never has to pass `previousResponse` back. The session is the input's `sessionId`.
 */
export default defineTool({
  name: 'turn_memory',
  description: "Read or write this session's previous turn output.",
  input: z.strictObject({ op: z.enum(['read', 'write']), previous: PreviousResponseSchema.optional() }),
  personal: ['previous'],
  resources: { tables: { notes: 'readWrite' } },
  connect: (env, aws) => dynamoTurnMemory(aws.dynamo(), requireEnv(env, 'NOTES_TABLE', 'turn_memory')),
  evalPorts: () => memoryTurnMemory(),
  async run({ op, previous }, ctx, memory) {
    const session = sessionOf(ctx);
    if (op === 'read') {
      const stored = PreviousResponseSchema.safeParse(await memory.get(session));
      return { found: stored.success, ...(stored.success && { previous: stored.data }) };
    }
    if (!previous) throw new Error('write needs the previous turn output');
    await memory.put(session, previous, ctx.now());
    return { saved: true };
  },
});
