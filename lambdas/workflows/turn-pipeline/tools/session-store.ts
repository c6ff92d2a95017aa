import { defineTool, requireEnv } from 'stepwise';
import * as z from 'zod';
import { dynamoSessionStore, memorySessionStore, SessionSchema, type SessionStore } from '../session.ts';

/**
 * The conversation session store (SessionsTable): `begin` reads the session and takes its lease
 * for this execution (a turn of the same session still running: `SessionBusyError`), `commit`
 * saves it and releases the lease, `release` only releases it.
 */
export default defineTool({
  name: 'session_store',
  description: 'Read (begin), save (commit) or release the conversation session of this turn.',
  input: z.strictObject({
    op: z.enum(['begin', 'commit', 'release']),
    sessionId: z.string().min(1).max(128),
    session: SessionSchema.optional(),
  }),
  personal: ['session'],
  resources: { tables: { sessions: 'readWrite' } },
  connect: (env, aws): SessionStore =>
    dynamoSessionStore(aws.dynamo(), requireEnv(env, 'SESSIONS_TABLE', 'session_store')),
  evalPorts: () => memorySessionStore(),
  async run({ op, sessionId, session }, ctx, store) {
    const execution = ctx.execution.name;
    if (op === 'begin') return { session: await store.begin(sessionId, execution, ctx.now()) };
    if (op === 'release') {
      await store.release(sessionId, execution);
      return { released: true };
    }
    if (!session || session.sessionId !== sessionId) throw new Error(`commit needs the session ${sessionId}`);
    return { session: await store.commit(session, execution) };
  },
});
