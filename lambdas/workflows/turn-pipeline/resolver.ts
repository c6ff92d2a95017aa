/**
 * The variable resolver: what a tool or an enforcement expression needs, found where the turn
 * already has it (this turn's entities, the session variables, the profile, in that order), and
 * what is still missing. Nothing is guessed: a variable none of them holds is returned as missing,
 * so generation asks the user for it.
 */
import type * as z from 'zod';

/** Where variables are looked up, first match wins. */
export type VariableSources = readonly Record<string, unknown>[];

export interface Resolution {
  resolved: Record<string, unknown>;
  stillMissing: string[];
}

const isKnown = (value: unknown) => value !== undefined && value !== null && value !== '';

/** Resolve each of `required` from the first source that holds it. */
export function resolveVariables(required: readonly string[], sources: VariableSources): Resolution {
  const resolved: Record<string, unknown> = {};
  const stillMissing: string[] = [];
  for (const name of new Set(required)) {
    const source = sources.find((s) => Object.hasOwn(s, name) && isKnown(s[name]));
    if (source) resolved[name] = source[name];
    else stillMissing.push(name);
  }
  return { resolved, stillMissing };
}

/** The arguments a tool cannot run without (its input fields that are not optional). */
export function requiredArguments(input: z.ZodObject): string[] {
  return Object.entries(input.shape)
    .filter(([, field]) => !field.safeParse(undefined).success)
    .map(([name]) => name);
}

/** The session variables an enforcement expression reads (`session.order_total` → `order_total`). */
export function sessionVariablesRead(paths: readonly string[]): string[] {
  return paths.flatMap((p) => (p.startsWith('session.') ? [p.split('.')[1]!] : []));
}
