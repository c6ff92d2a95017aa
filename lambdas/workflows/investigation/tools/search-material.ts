import { defineTool } from 'stepwise';
import * as z from 'zod';
import { materialOf } from '../material.ts';

const MAX_MATCHES = 50;

/** Plain-text, case-insensitive search over every file of the material. */
export default defineTool({
  name: 'search_material',
  description: `Find lines containing a text (case-insensitive) in the material; at most ${MAX_MATCHES} matches.`,
  input: z.strictObject({ text: z.string().min(1).max(200) }),
  async run({ text }, ctx) {
    const needle = text.toLowerCase();
    const matches = materialOf(ctx).flatMap((f) =>
      f.content
        .split('\n')
        .flatMap((line, i) =>
          line.toLowerCase().includes(needle) ? [{ path: f.path, line: i + 1, text: line.slice(0, 300) }] : [],
        ),
    );
    return { matches: matches.slice(0, MAX_MATCHES), truncated: matches.length > MAX_MATCHES };
  },
});
