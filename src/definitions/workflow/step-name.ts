import * as z from 'zod';

/** Step and workflow names: lowercase, digits and dashes (`01-extract-serial`), usable as ASL state names. */
export const StepName = z.string().regex(/^[a-z0-9][a-z0-9-]{0,78}$/, 'lowercase letters, digits and dashes');
