import { isDeepStrictEqual } from 'node:util';
import type { StepDefinition } from '../../definitions/workflow/schema.ts';
import type { StepResult } from './types.ts';

/** A declared output whose reported value the engine did not keep. */
export interface OutputOverride {
  field: string;
  /** The output's `from` (`<tool>.<resultKey>`). */
  from: string;
  /** What the step (the model) reported. */
  reported: unknown;
  /** What the tool returned; undefined when there was no successful call, so the field was removed. */
  kept: unknown;
}

/**
 * Outputs declared with `from: <tool>.<resultKey>` come from the step's last successful call of
 * that tool (`result[resultKey]`), never from what the model reported: a guessed or injected
 * value (a ticket id the email made up) cannot reach later steps. Without a successful call the
 * field is removed. Returns the corrected result and the reported values that were replaced.
 */
export function withToolOutputs(
  step: StepDefinition,
  result: StepResult,
): { result: StepResult; overrides: OutputOverride[] } {
  const fields = { ...result.fields };
  const overrides: OutputOverride[] = [];
  for (const [field, { from }] of Object.entries(step.outputs)) {
    if (from === undefined) continue;
    const [tool, key] = from.split('.') as [string, string];
    const call = result.toolCalls.filter((c) => c.tool === tool && c.error === undefined).at(-1);
    const answer = call?.result;
    const kept =
      typeof answer === 'object' && answer !== null && Object.hasOwn(answer, key)
        ? (answer as Record<string, unknown>)[key]
        : undefined;
    const reported = fields[field];
    if (reported !== undefined && !isDeepStrictEqual(reported, kept)) overrides.push({ field, from, reported, kept });
    if (kept === undefined) delete fields[field];
    else fields[field] = kept;
  }
  return { result: { ...result, fields }, overrides };
}
