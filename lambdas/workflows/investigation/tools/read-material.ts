import { defineTool } from 'stepwise';
import * as z from 'zod';
import { fileOf } from '../material.ts';

const MAX_LINES = 200;

/** A file of the material, numbered lines, at most 200 per call. */
export default defineTool({
  name: 'read_material',
  description: `Read lines of one file of the material (numbered; at most ${MAX_LINES} per call).`,
  input: z.strictObject({
    path: z.string().min(1),
    fromLine: z.number().int().min(1).default(1),
    toLine: z.number().int().min(1).optional(),
  }),
  async run({ path, fromLine, toLine }, ctx) {
    const lines = fileOf(ctx, path).content.split('\n');
    const last = Math.min(lines.length, toLine ?? lines.length, fromLine + MAX_LINES - 1);
    const text = lines
      .slice(fromLine - 1, last)
      .map((line, i) => `${fromLine + i}: ${line}`)
      .join('\n');
    return { path, fromLine, toLine: last, totalLines: lines.length, text };
  },
});
