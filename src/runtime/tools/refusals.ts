import { ToolInputError } from '../../core/errors.ts';
import type { ToolCallRecord } from '../contracts/step.ts';
import type { ToolSpec } from './types.ts';

/** How much of a refused call's arguments is kept: enough to see what was tried, never enough to grow the state. */
const MAX_KEYS = 12;
const MAX_TEXT = 120;

function clip(value: unknown, depth: number): unknown {
  if (typeof value === 'string')
    return value.length > MAX_TEXT ? `${value.slice(0, MAX_TEXT - 1)}…(${value.length} chars)` : value;
  if (value === null || typeof value !== 'object') return value;
  if (depth >= 2) return Array.isArray(value) ? `[array of ${value.length}]` : '{…}';
  const entries = Array.isArray(value) ? value.map((v, i) => [String(i), v] as const) : Object.entries(value);
  const kept = Object.fromEntries(
    entries.slice(0, MAX_KEYS).map(([k, v]) => [k.slice(0, MAX_TEXT), clip(v, depth + 1)]),
  );
  if (entries.length > MAX_KEYS) kept['…'] = `${entries.length - MAX_KEYS} more`;
  return kept;
}

/**
 * The arguments of a refused call (not allowed, bad or bound arguments) as recorded in the step
 * output: a bounded summary. A model that loops on refused calls with huge arguments must not push
 * the execution state past Step Functions' 256 KB.
 */
export function refusedArgs(args: unknown): Record<string, unknown> {
  const value = clip(args, 0);
  return value !== null && typeof value === 'object' && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : { value };
}

/**
 * A call's arguments parsed by the tool's input schema, or the record of the refused call: a `ToolInputError` naming
 * the first problem, with the arguments bounded.
 */
export function parsedArgs(
  tool: string,
  input: ToolSpec['input'],
  args: unknown,
): { args: Record<string, unknown>; refused?: undefined } | { refused: ToolCallRecord } {
  const parsed = input.safeParse(args);
  if (parsed.success) return { args: parsed.data };
  const issue = parsed.error.issues[0]!;
  return {
    refused: {
      tool,
      args: refusedArgs(args),
      error: `${ToolInputError.name}: ${issue.path.join('.') || 'args'}: ${issue.message}`,
    },
  };
}
