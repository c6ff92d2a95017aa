import { lookup } from '../core/template.ts';
import type { EvalCase, ExpectedFunctionCall, ExpectedStep, TransitionRule } from '../definitions/eval-cases.ts';
import type { WorkflowDefinition } from '../definitions/workflow/schema.ts';
import { ROUTE_TOOL } from '../runtime/contracts/prompt.ts';
import type { StepOutput } from '../runtime/contracts/step.ts';
import {
  fieldLabel,
  NEXT_STEP_LABEL,
  REASON_LABEL,
  renderStepText,
  resolveFieldLabel,
} from '../runtime/contracts/text-protocol.ts';

/**
 * The step-sequence validator: compares the steps an execution ran with a case's
 * `expected_steps` and reports the FIRST step that diverged and why. Later steps are not judged:
 * once an execution took a wrong turn, everything after it is a consequence.
 */

/** One executed step, as the step handler returned it (the execution history or the event log). */
export type ActualStep = Pick<StepOutput, 'step' | 'next' | 'reason' | 'fields' | 'toolCalls'> & { reply?: string };

export interface EvalFailure {
  /** Position in the step sequence (0 = entry step); null for whole-execution checks. */
  index: number | null;
  /**
   * The expected step at that position (or the actual one, for an unexpected extra step); null for whole-execution
   * checks.
   */
  step: string | null;
  expected: string;
  actual: string;
  why: string;
}

export interface ValidationResult {
  passed: boolean;
  failures: EvalFailure[];
}

const calls = (step: ActualStep) => step.toolCalls.filter((c) => c.tool !== ROUTE_TOOL);

/** The `next` of a step that failed (it returned no output, so it did not route). */
export const FAILED_STEP = '(failed)';

/** Deep equality of JSON values. */
function same(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (
    typeof a !== 'object' ||
    typeof b !== 'object' ||
    a === null ||
    b === null ||
    Array.isArray(a) !== Array.isArray(b)
  )
    return false;
  const ka = Object.keys(a);
  return ka.length === Object.keys(b).length && ka.every((k) => same((a as any)[k], (b as any)[k]));
}

/** Every expected argument is present with the same value. */
const hasArgs = (args: Record<string, unknown>, expected: Record<string, unknown>) =>
  Object.entries(expected).every(([k, v]) => same(args[k], v));

/**
 * Rewrite `LABEL: value` expectations whose label is a shortened field label (`SERIAL:`) to the
 * label the step's text form uses (`SERIAL_NUMBER:`).
 */
function canonical(expected: string, step: ActualStep): string {
  const m = /^([A-Z][A-Z0-9_]*):(.*)$/s.exec(expected);
  if (!m || m[1] === NEXT_STEP_LABEL || m[1] === REASON_LABEL) return expected;
  const field = resolveFieldLabel(m[1]!, Object.keys(step.fields));
  return field ? `${fieldLabel(field)}:${m[2]}` : expected;
}

const quote = (text: string) => JSON.stringify(text);

function checkStep(
  index: number,
  expected: ExpectedStep,
  actual: ActualStep,
  previous: ActualStep | undefined,
): EvalFailure[] {
  const at = { index, step: expected.step_name };
  if (actual.step !== expected.step_name) {
    const cause = previous
      ? `${previous.step} routed to ${previous.next} (reason: ${previous.reason})`
      : `the execution started at ${actual.step}`;
    return [{ ...at, expected: expected.step_name, actual: actual.step, why: `wrong step: ${cause}` }];
  }
  const failures: EvalFailure[] = [];
  const text = renderStepText(actual);
  for (const wanted of expected.output_contains) {
    if (!text.includes(canonical(wanted, actual)))
      failures.push({
        ...at,
        expected: `output contains ${quote(wanted)}`,
        actual: text,
        why: `the step's output does not contain ${quote(wanted)}`,
      });
  }
  if (expected.function_call) {
    const made = calls(actual);
    const named = made.filter((c) => c.tool === expected.function_call);
    const list = made.map((c) => c.tool).join(', ') || 'none';
    if (named.length === 0)
      failures.push({
        ...at,
        expected: `calls ${expected.function_call}`,
        actual: `calls: ${list}`,
        why: `${expected.function_call} was not called in this step`,
      });
    else if (expected.function_args && !named.some((c) => hasArgs(c.args, expected.function_args!)))
      failures.push({
        ...at,
        expected: `${expected.function_call} ${JSON.stringify(expected.function_args)}`,
        actual: named.map((c) => `${c.tool} ${JSON.stringify(c.args)}`).join('; '),
        why: `${expected.function_call} was called with other arguments`,
      });
  }
  return failures;
}

/**
 * Compare executed steps with expected ones, in order, and report the first diverging step: a
 * different step, a missing or extra step, missing output text, or a missing or different tool
 * call. All failed assertions of that one step are reported.
 */
export function validateStepSequence(expected: ExpectedStep[], actual: ActualStep[]): ValidationResult {
  for (let i = 0; i < Math.max(expected.length, actual.length); i++) {
    const want = expected[i];
    const got = actual[i];
    const failures: EvalFailure[] = [];
    if (want && !got) {
      const last = actual.at(-1);
      const ended = last
        ? `the execution ended after ${last.step} (next: ${last.next}, reason: ${last.reason})`
        : 'no step ran';
      failures.push({
        index: i,
        step: want.step_name,
        expected: want.step_name,
        actual: '(none)',
        why: `missing step: ${ended}`,
      });
    } else if (got && !want) {
      const before = actual[i - 1];
      failures.push({
        index: i,
        step: got.step,
        expected: '(end)',
        actual: got.step,
        why: `unexpected extra step${before ? `: ${before.step} routed to ${before.next} (reason: ${before.reason})` : ''}`,
      });
    } else failures.push(...checkStep(i, want!, got!, actual[i - 1]));
    if (failures.length) return { passed: false, failures };
  }
  return { passed: true, failures: [] };
}

/** The execution's tool calls (all steps, in order, without `route`) against `expected_function_calls`. */
export function validateFunctionCalls(expected: ExpectedFunctionCall[], actual: ActualStep[]): ValidationResult {
  const made = actual.flatMap((step) => calls(step).map((call) => ({ ...call, step: step.step })));
  const shown = made.map((c) => `${c.tool} (${c.step})`).join(', ') || 'none';
  const wanted = expected.map((e) => e.function_name).join(', ') || 'none';
  for (let i = 0; i < Math.max(expected.length, made.length); i++) {
    const want = expected[i];
    const got = made[i];
    const failed = got !== undefined && got.error !== undefined;
    if (
      !want ||
      !got ||
      want.function_name !== got.tool ||
      (want.arguments && !hasArgs(got.args, want.arguments)) ||
      (want.failed !== undefined && want.failed !== failed)
    ) {
      const why = !got
        ? `missing call ${want!.function_name}`
        : !want
          ? `unexpected call ${got.tool} in ${got.step}`
          : want.function_name !== got.tool
            ? `call ${i + 1} is ${got.tool} in ${got.step}, expected ${want.function_name}`
            : want.failed !== undefined && want.failed !== failed
              ? `${got.tool} in ${got.step} ${failed ? `failed (${got.error})` : 'succeeded'}, expected it to ${want.failed ? 'fail' : 'succeed'}`
              : `${got.tool} in ${got.step} was called with ${JSON.stringify(got.args)}, expected ${JSON.stringify(want.arguments)}`;
      return { passed: false, failures: [{ index: null, step: null, expected: wanted, actual: shown, why }] };
    }
  }
  return { passed: true, failures: [] };
}

const isSet = (value: unknown) => value !== undefined && value !== null && value !== '';

/** Why a rule applies to this data (`serialNumber is present`), or undefined when it does not. */
function ruleApplies({ when }: TransitionRule, data: Record<string, unknown>): string | undefined {
  const holds =
    when.present.every((p) => isSet(lookup(data, p))) &&
    when.absent.every((p) => !isSet(lookup(data, p))) &&
    Object.entries(when.equals).every(([p, v]) => same(lookup(data, p), v));
  if (!holds) return undefined;
  return [
    ...when.present.map((p) => `${p} is present`),
    ...when.absent.map((p) => `${p} is absent`),
    ...Object.entries(when.equals).map(([p, v]) => `${p} is ${JSON.stringify(v)}`),
  ].join(' and ');
}

/**
 * Check every step against the workflow's transition rules: where the data after a step (its
 * outputs merged into what earlier steps produced) matches a rule's `when`, the step must have
 * routed to one of the rule's `next`. A step that failed did not route and is not judged.
 */
export function validateTransitionRules(rules: readonly TransitionRule[], actual: ActualStep[]): ValidationResult {
  const failures: EvalFailure[] = [];
  let data: Record<string, unknown> = {};
  for (const [index, step] of actual.entries()) {
    data = { ...data, ...step.fields };
    if (step.next === FAILED_STEP) continue;
    for (const rule of rules.filter((r) => r.step === step.step)) {
      const because = ruleApplies(rule, data);
      if (because === undefined || rule.next.includes(step.next)) continue;
      failures.push({
        index,
        step: step.step,
        expected: `routes to ${rule.next.join(' or ')}`,
        actual: step.next,
        why: `transition rule "${rule.name}": ${because}, but ${step.step} routed to ${step.next} (reason: ${step.reason})`,
      });
    }
  }
  return { passed: failures.length === 0, failures };
}

/** A case with `processing_time_ms` fails when it took longer on the local runtime. */
export function validateProcessingTime(evalCase: EvalCase, durationMs: number): ValidationResult {
  const limit = evalCase.expected_output.processing_time_ms;
  if (limit === undefined || durationMs <= limit) return { passed: true, failures: [] };
  const why = `the case took ${durationMs} ms on the local runtime, over its processing_time_ms of ${limit} ms`;
  return {
    passed: false,
    failures: [{ index: null, step: null, expected: `at most ${limit} ms`, actual: `${durationMs} ms`, why }],
  };
}

/** How the items of each map step and the branches of each parallel step ended, the last time the step ran. */
export interface ConstructResults {
  items: Record<string, { succeeded: number; failed: number }>;
  branches: Record<string, Record<string, 'SUCCEEDED' | 'FAILED'>>;
}

const okOf = (result: unknown) => (result as { ok?: unknown } | null)?.ok === true;

/**
 * Read the results of map and parallel steps from the execution's trail: what the Map or Parallel
 * state handed the step's join (its input's `previous.fields`), so a join that failed on them
 * (too many failed items, a failed branch) is counted too.
 */
export function constructResults(
  def: WorkflowDefinition,
  trail: readonly { name: string; input: unknown }[],
): ConstructResults {
  const results: ConstructResults = { items: {}, branches: {} };
  for (const { name, input } of trail) {
    const step = def.steps.find((s) => s.name === name);
    const fields = (input as { previous?: { fields?: Record<string, unknown> } } | null)?.previous?.fields ?? {};
    if (step?.map) {
      const items = Array.isArray(fields[step.map.output]) ? (fields[step.map.output] as unknown[]) : [];
      const succeeded = items.filter(okOf).length;
      results.items[name] = { succeeded, failed: items.length - succeeded };
    } else if (step?.parallel)
      results.branches[name] = Object.fromEntries(
        Object.keys(step.parallel.branches).map((b) => [b, okOf(fields[b]) ? 'SUCCEEDED' : 'FAILED']),
      );
  }
  return results;
}

/** The case's `items` and `branches` against what the execution's map and parallel steps did. */
export function validateConstructs(evalCase: EvalCase, actual: ConstructResults): ValidationResult {
  const { items = {}, branches = {} } = evalCase.expected_output;
  const failures: EvalFailure[] = [];
  const fail = (step: string, expected: string, got: string, why: string) =>
    failures.push({ index: null, step, expected, actual: got, why });
  for (const [step, want] of Object.entries(items)) {
    const got = actual.items[step];
    const shown = got ? `${got.succeeded} succeeded, ${got.failed} failed` : '(no items ran)';
    const expected = [
      ...(want.succeeded !== undefined ? [`${want.succeeded} succeeded`] : []),
      ...(want.failed !== undefined ? [`${want.failed} failed`] : []),
    ].join(', ');
    if (!got) fail(step, expected, shown, `${step} ran no items: it did not run, or is not a map step`);
    else if (
      (want.succeeded !== undefined && want.succeeded !== got.succeeded) ||
      (want.failed !== undefined && want.failed !== got.failed)
    )
      fail(step, expected, shown, `${step}'s items: ${shown}, expected ${expected}`);
  }
  for (const [step, want] of Object.entries(branches)) {
    const got = actual.branches[step];
    const expected = JSON.stringify(want);
    if (!got) {
      fail(step, expected, '(no branches ran)', `${step} ran no branches: it did not run, or is not a parallel step`);
      continue;
    }
    for (const [branch, status] of Object.entries(want))
      if (got[branch] !== status)
        fail(
          step,
          expected,
          JSON.stringify(got),
          got[branch]
            ? `${step}'s branch ${branch} ${got[branch]}, expected ${status}`
            : `${step} has no branch ${branch}`,
        );
  }
  return { passed: failures.length === 0, failures };
}

/**
 * Validate an execution against a case: the step sequence (when given), the overall tool calls
 * (when given), the items and branches (when given), then the workflow's transition rules (always).
 */
export function validateCase(
  evalCase: EvalCase,
  actual: ActualStep[],
  rules: readonly TransitionRule[] = [],
  constructs: ConstructResults = { items: {}, branches: {} },
): ValidationResult {
  const { expected_steps, expected_function_calls } = evalCase.expected_output;
  const failures = [
    ...(expected_steps ? validateStepSequence(expected_steps, actual).failures : []),
    ...(expected_function_calls ? validateFunctionCalls(expected_function_calls, actual).failures : []),
    ...validateConstructs(evalCase, constructs).failures,
    ...validateTransitionRules(rules, actual).failures,
  ];
  return { passed: failures.length === 0, failures };
}
