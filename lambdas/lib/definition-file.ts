import { relative } from 'node:path';
import { parse as parseYaml } from 'yaml';
import type { z } from 'zod';
import { DefinitionError } from './errors.ts';

/** A path as users see it in error messages: relative to the working directory. */
export function relPath(file: string): string {
  return relative(process.cwd(), file) || file;
}

/** The first zod issue as (field, message); inside a union, the member whose base type matched. */
function firstIssue(issues: readonly z.core.$ZodIssue[]): { path: PropertyKey[]; message: string } {
  const issue = issues[0]!;
  if (issue.code === 'invalid_union' && issue.errors.length > 0) {
    const branch = issue.errors.find((b) => !b.some((i) => i.code === 'invalid_type' && i.path.length === 0)) ?? issue.errors[0]!;
    const inner = firstIssue(branch);
    return { path: [...issue.path, ...inner.path], message: inner.message };
  }
  return { path: issue.path, message: issue.message };
}

/** Validate a definition file's content; the error names the file and the field. */
export function checkDefinition<T>(schema: z.ZodType<T>, value: unknown, file: string): T {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const { path, message } = firstIssue(parsed.error.issues);
  throw new DefinitionError(file, path.map(String).join('.') || '(root)', message);
}

/**
 * Parse YAML text; a syntax error becomes a DefinitionError on field `(yaml)` that gives the line in
 * the file itself (`firstLine`: where `text` starts in it, e.g. 2 for frontmatter after `---`).
 */
export function parseDefinitionYaml(text: string, file: string, firstLine = 1): unknown {
  try {
    return parseYaml(text);
  } catch (e) {
    const { message, linePos } = e as Error & { linePos?: [{ line: number; col: number }] };
    const first = message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '');
    const where = linePos ? `line ${linePos[0].line + firstLine - 1}, column ${linePos[0].col}: ` : '';
    throw new DefinitionError(file, '(yaml)', `${where}${first}`);
  }
}
