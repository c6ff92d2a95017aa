/**
 * A zod issue in a user's words: a required field left out reads "missing field `name`" (with
 * the path of the object that lacks it), not zod's "Invalid input: expected string, received
 * undefined".
 */
import type * as z from 'zod';

/**
 * Where the problem is (`(root)` for the whole value; a missing field's own path) and what it is;
 * `within` is where a missing field was expected (the object that lacks it).
 */
export function issueText(issue: z.core.$ZodIssue): { path: string; message: string; within: string } {
  const path = issue.path.map(String);
  const at = path.join('.') || '(root)';
  const missing = issue.code === 'invalid_type' && / received undefined$/.test(issue.message) && path.length > 0;
  if (missing)
    return { path: at, message: `missing field \`${path.at(-1)}\``, within: path.slice(0, -1).join('.') || '(root)' };
  return { path: at, message: issue.message, within: at };
}
