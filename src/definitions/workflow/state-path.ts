import * as z from 'zod';

/**
 * A path into the execution state: `data.<field>...` (what earlier steps produced) or `input.<field>...` (the execution
 * input).
 */
export const StatePath = z
  .string()
  .regex(/^(data|input)(\.[A-Za-z0-9_-]+)+$/, 'data.<field> or input.<field> (dot-separated)');
