import { defineTool, requireEnv } from 'stepwise';
import * as z from 'zod';
import { dynamoNotes, noteKey, sessionOf } from '../notes.ts';

/** Read a note of this session (NotesTable). */
export default defineTool({
  name: 'lookup_note',
  description: "Look up a note saved earlier in this user's session by its key.",
  input: z.strictObject({
    key: z.string().trim().min(1).max(60).describe('What the note is about, e.g. locker code.'),
  }),
  resources: { tables: { notes: 'read' } },
  connect: (env, aws) => dynamoNotes(aws.dynamo(), requireEnv(env, 'NOTES_TABLE', 'lookup_note')),
  async run({ key }, ctx, notes) {
    const value = await notes.get(sessionOf(ctx), key);
    return value === undefined
      ? {
          key: noteKey(key),
          found: false,
          text: `no note about ${noteKey(key)}`,
          reminder: `Nothing is noted about ${noteKey(key)} yet: ask the user before assuming it.`,
        }
      : { key: noteKey(key), found: true, value, text: `${noteKey(key)}: ${value}` };
  },
});
