import type { StepDefinition } from '../../definitions/workflow/schema.ts';
import type { ToolCallRecord } from './step.ts';

/**
 * The text form of a step's result, `LABEL: value` lines:
 *
 * ```text
 * NEXT_STEP: 02-look-up
 * REASON: serial number found
 * SERIAL_NUMBER: SN-48213-X
 * ```
 *
 * A model that answers in text instead of calling `route` is parsed with it (the fallback parse),
 * and evals assert on it (`output_contains`). A field's label is its output name in UPPER_SNAKE
 * case; a label may be shortened to its leading words when that names one field only, so the
 * `SERIAL:` means `serialNumber` in a step whose outputs are serialNumber and issueSummary.
 */

export const NEXT_STEP_LABEL = 'NEXT_STEP';
export const REASON_LABEL = 'REASON';

/** `serialNumber` → `SERIAL_NUMBER`. */
export function fieldLabel(name: string): string {
  return name.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase();
}

/** The output field a label names: its full label, or leading words of it that fit one field only. */
export function resolveFieldLabel(label: string, fieldNames: readonly string[]): string | undefined {
  const exact = fieldNames.find((name) => fieldLabel(name) === label);
  if (exact) return exact;
  const candidates = fieldNames.filter((name) => fieldLabel(name).startsWith(`${label}_`));
  return candidates.length === 1 ? candidates[0] : undefined;
}

// Tolerates markdown around labels (`**NEXT_STEP:** x`, `- SERIAL: x`).
const LINE = /^[\s*_`>-]*([A-Z][A-Z0-9_]*)[*_`]*\s*:[*_`]*\s*(.*?)\s*$/;

export interface ParsedStepText {
  next?: string;
  reason?: string;
  fields: Record<string, unknown>;
}

function coerce(value: string, type: string): unknown {
  if (type === 'number') return /^-?\d+(\.\d+)?$/.test(value) ? Number(value) : value;
  if (type === 'boolean') return value === 'true' ? true : value === 'false' ? false : value;
  if (type === 'object') {
    try {
      return JSON.parse(value);
    } catch {
      return value;
    }
  }
  return value;
}

const unquote = (value: string) => value.replace(/^[`*"']+|[`*"'.,;]+$/g, '');

/**
 * Parse the `LABEL: value` lines of a model's text answer. The last line of a label wins (the
 * answer's conclusion). Values are coerced to the declared output types; validation happens later,
 * against the same route schema the `route` tool uses.
 */
export function parseStepText(text: string, step: Pick<StepDefinition, 'outputs'>): ParsedStepText {
  const names = Object.keys(step.outputs);
  const result: ParsedStepText = { fields: {} };
  for (const line of text.split(/\r?\n/)) {
    const m = LINE.exec(line);
    if (!m) continue;
    const [, label, raw] = m as unknown as [string, string, string];
    if (label === NEXT_STEP_LABEL) result.next = unquote(raw.split(/\s+/)[0] ?? '');
    else if (label === REASON_LABEL) result.reason = raw;
    else {
      const name = resolveFieldLabel(label, names);
      if (name && raw) result.fields[name] = coerce(unquote(raw), step.outputs[name]!.type);
    }
  }
  return result;
}

/** What a step produced, as far as its text form is concerned. */
export interface StepTextSource {
  next: string;
  reason: string;
  fields: Record<string, unknown>;
  toolCalls: ToolCallRecord[];
  reply?: string;
}

const show = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value));

/**
 * The text form of a step result: routing lines, one line per field, one line per tool call (with
 * its result, e.g. the ticket id, or its error), then the reply sent to the customer.
 */
export function renderStepText(out: StepTextSource): string {
  const lines = [`${NEXT_STEP_LABEL}: ${out.next}`, `${REASON_LABEL}: ${out.reason}`];
  for (const [name, value] of Object.entries(out.fields)) lines.push(`${fieldLabel(name)}: ${show(value)}`);
  for (const call of out.toolCalls) {
    const outcome = call.error !== undefined ? `ERROR ${call.error}` : show(call.result ?? null);
    lines.push(`CALL ${call.tool} ${JSON.stringify(call.args)} -> ${outcome}`);
  }
  if (out.reply) lines.push('REPLY:', out.reply);
  return lines.join('\n');
}
