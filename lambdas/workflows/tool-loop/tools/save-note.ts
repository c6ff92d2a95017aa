import { defineTool, requireEnv } from 'stepwise';
import * as z from 'zod';
import { dynamoNotes, noteKey, sessionOf } from '../notes.ts';

/** Remember a value for this session (NotesTable). */
export default defineTool({
  name: 'save_note',
  description: "Remember a short note for this user's session under a key (e.g. key 'locker code', value '4512').",
  input: z.strictObject({
    key: z.string().trim().min(1).max(60).describe('What the note is about, e.g. locker code.'),
    value: z.string().trim().min(1).max(500).describe('The note.'),
  }),
  personal: ['value'],
  resources: { tables: { notes: 'readWrite' } },
  connect: (env, aws) => dynamoNotes(aws.dynamo(), requireEnv(env, 'NOTES_TABLE', 'save_note')),
  async run({ key, value }, ctx, notes) {
    await notes.put(sessionOf(ctx), key, value, ctx.now());
    return { key: noteKey(key), saved: true, text: `noted ${noteKey(key)}` };
  },
});
