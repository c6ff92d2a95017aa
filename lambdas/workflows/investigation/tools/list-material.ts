import { defineTool } from 'stepwise';
import * as z from 'zod';
import { materialOf } from '../material.ts';

/** What the investigation was given: paths and sizes, no content. */
export default defineTool({
  name: 'list_material',
  description: 'List the files of the material under investigation (path, lines, bytes).',
  input: z.strictObject({}),
  async run(_args, ctx) {
    return {
      files: materialOf(ctx).map((f) => ({
        path: f.path,
        lines: f.content.split('\n').length,
        bytes: Buffer.byteLength(f.content),
      })),
    };
  },
});
