/**
 * Replay and fork, the pure part: where a recorded execution can be forked (every step it ran),
 * the state at that point, what the step received there, an edited step input turned back into
 * the state, pinned tool results, and the diff of two runs. Everything is read from the recorded
 * history and the compiled definition; what a step receives is computed by the same interpreter
 * the local runtime runs, from the step Task's own `Parameters` (nothing of the payload's shape is
 * written here). Studio and `stepwise replay` both use this module; `replay.ts` runs the fork.
 */
import type { HistoryEvent } from '@aws-sdk/client-sfn';
import { StateMachine, type StateMachineDefinition } from 'aws-local-stepfunctions';
import * as z from 'zod';
import { consensusPlanStateName } from '../../cdk/names.ts';
import { InvalidInputError } from '../../core/errors.ts';
import { checkInput } from '../../definitions/workflow/input.ts';
import type { WorkflowDefinition } from '../../definitions/workflow/schema.ts';
import { readStepContext } from '../../runtime/contracts/prompt.ts';
import type { StepOutput, TokenUsage } from '../../runtime/contracts/step.ts';
import { StepInputSchema } from '../../runtime/step-handler/handler.ts';
import { sumUsage } from '../../runtime/steps/types.ts';
import type { Toolbox, ToolDefinition } from '../../runtime/tools/types.ts';
import { type ExecutionRecord, type ForkChange, stepTrail } from './history.ts';
import { mockToolbox } from './mock-toolbox.ts';

/** A step of a recorded execution, as a place to fork from. */
export interface ForkPoint {
  /** Its position among the steps the execution ran (0 = the entry step). */
  index: number;
  step: string;
  /** The state a fork starts at: the step's Task, or its consensus plan (a fork samples again). */
  entryState: string;
  /**
   * The position in `record.events` of that state's `StateEntered` event: the fork's history keeps the events before
   * it.
   */
  eventIndex: number;
  /** The state at that point: the entry state's recorded input. */
  state: unknown;
}

const parse = (text: string | undefined): unknown => {
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
};

/** Every step the execution entered, in order, with the state it was entered with. */
export function forkPoints(record: Pick<ExecutionRecord, 'events'>, def: WorkflowDefinition): ForkPoint[] {
  const steps = new Map(def.steps.map((s) => [s.name, s]));
  const points: ForkPoint[] = [];
  const planEntered = new Map<string, number>();
  record.events.forEach((e, i) => {
    const name = e.stateEnteredEventDetails?.name;
    if (!name || !e.type?.endsWith('StateEntered')) return;
    if (e.type === 'PassStateEntered') planEntered.set(name, i);
    const step = e.type === 'TaskStateEntered' ? steps.get(name) : undefined;
    if (!step) return;
    const plan = step.consensus ? planEntered.get(consensusPlanStateName(step.name)) : undefined;
    const eventIndex = plan ?? i;
    points.push({
      index: points.length,
      step: step.name,
      entryState: plan === undefined ? step.name : consensusPlanStateName(step.name),
      eventIndex,
      state: parse(record.events[eventIndex]!.stateEnteredEventDetails?.input),
    });
  });
  return points;
}

/**
 * The fork point `from` names: a trail position (`2`), a step name (its first run), or
 * `<step>@<n>` (its n-th run, from 1).
 * @throws InvalidInputError naming the steps that ran.
 */
export function forkPoint(points: readonly ForkPoint[], from: string | number): ForkPoint {
  const ran = () => points.map((p) => `${p.index}:${p.step}`).join(', ') || 'none';
  if (typeof from === 'number' || /^\d+$/.test(from)) {
    const point = points[Number(from)];
    if (!point) throw new InvalidInputError(`no step at position ${from} (the steps that ran: ${ran()})`);
    return point;
  }
  const [step, nth = '1'] = from.split('@') as [string, string?];
  const point = points.filter((p) => p.step === step)[Number(nth) - 1];
  if (!point) throw new InvalidInputError(`the execution did not run ${from} (the steps that ran: ${ran()})`);
  return point;
}

/** The payload template of a step's Task (`Parameters`, or `Parameters.Payload` through `lambda:invoke`). */
function payloadTemplate(definition: Pick<StateMachineDefinition, 'States'>, step: string): Record<string, unknown> {
  const task = definition.States[step] as
    | { Type?: string; Resource?: string; Parameters?: Record<string, unknown> }
    | undefined;
  if (task?.Type !== 'Task' || !task.Parameters)
    throw new InvalidInputError(`"${step}" is not a Task of the state machine`);
  return /:states:::lambda:invoke$/.test(task.Resource ?? '')
    ? (task.Parameters.Payload as Record<string, unknown>)
    : task.Parameters;
}

/**
 * What the step's Task sends for `state`: its `Parameters` applied by the interpreter the local
 * runtime runs (JSONPath, intrinsics, `$$.Execution`), in a Pass state with the same template.
 */
export async function stepInputFor(
  definition: Pick<StateMachineDefinition, 'States'>,
  step: string,
  state: unknown,
  execution: { id: string; name: string },
): Promise<Record<string, unknown>> {
  const machine = new StateMachine(
    {
      StartAt: 'StepInput',
      States: { StepInput: { Type: 'Pass', Parameters: payloadTemplate(definition, step), End: true } },
    } as StateMachineDefinition,
    {
      validationOptions: { noValidate: true },
    },
  );
  const run = machine.run(state as never, { context: { Execution: { Id: execution.id, Name: execution.name } } });
  return (await run.result) as Record<string, unknown>;
}

/** The step-input keys read straight from a key of the state (`"previous.$": "$.result"` → previous ← result). */
function stateKeys(
  definition: Pick<StateMachineDefinition, 'States'>,
  step: string,
): [inputKey: string, stateKey: string][] {
  return Object.entries(payloadTemplate(definition, step)).flatMap(([key, value]) => {
    const path = typeof value === 'string' && key.endsWith('.$') ? /^\$\.([A-Za-z_][A-Za-z0-9_]*)$/.exec(value) : null;
    return path ? [[key.slice(0, -2), path[1]!] as [string, string]] : [];
  });
}

/** The part of a step input a person may edit: the keys that come straight from the state (`input`, `previous`, `error`, `counters`). */
export function editableStepInput(
  definition: Pick<StateMachineDefinition, 'States'>,
  step: string,
  stepInput: Record<string, unknown>,
): Record<string, unknown> {
  return Object.fromEntries(
    stateKeys(definition, step).flatMap(([key]) => (Object.hasOwn(stepInput, key) ? [[key, stepInput[key]]] : [])),
  );
}

/** The state that makes the step receive `edited` (the inverse of the Task's plain references), over `base` (the recorded state). */
export function stateFromStepInput(
  definition: Pick<StateMachineDefinition, 'States'>,
  step: string,
  edited: Record<string, unknown>,
  base: unknown,
): Record<string, unknown> {
  const state: Record<string, unknown> = {
    ...(base && typeof base === 'object' ? (base as Record<string, unknown>) : {}),
  };
  for (const [key, stateKey] of stateKeys(definition, step))
    if (Object.hasOwn(edited, key)) state[stateKey] = edited[key];
  return state;
}

/** One reason an edited step input is refused, at its path in the edited document. */
export interface ForkProblem {
  path: string;
  message: string;
}

/**
 * Check an edited step input against the step's input schema (the step handler's `StepInputSchema`
 * and the workflow's input schema), as the step would receive it in the fork.
 * @returns the problems (empty when the fork can run) and the state the fork starts with.
 */
export async function checkForkInput(
  def: WorkflowDefinition,
  definition: Pick<StateMachineDefinition, 'States'>,
  point: ForkPoint,
  edited: unknown,
  execution: { id: string; name: string },
): Promise<{ problems: ForkProblem[]; state?: Record<string, unknown> }> {
  if (!edited || typeof edited !== 'object' || Array.isArray(edited))
    return { problems: [{ path: '(root)', message: 'the step input must be a JSON object' }] };
  // The edited keys first, on their own: the Parameters (States.MathAdd on previous.count) fail on some bad values without saying where.
  const keys = Object.fromEntries(
    stateKeys(definition, point.step).flatMap(([key]) => (key in StepInputSchema.shape ? [[key, true as const]] : [])),
  ) as Partial<Record<keyof typeof StepInputSchema.shape, true>>;
  const own = StepInputSchema.pick(keys).safeParse(edited);
  if (!own.success)
    return { problems: own.error.issues.map((i) => ({ path: i.path.join('.') || '(root)', message: i.message })) };
  const state = stateFromStepInput(definition, point.step, edited as Record<string, unknown>, point.state);
  let received: Record<string, unknown>;
  try {
    received = await stepInputFor(definition, point.step, state, execution);
  } catch (e) {
    return {
      problems: [{ path: '(root)', message: `the step's Parameters cannot be applied: ${(e as Error).message}` }],
    };
  }
  const parsed = StepInputSchema.safeParse(received);
  if (!parsed.success)
    return { problems: parsed.error.issues.map((i) => ({ path: i.path.join('.') || '(root)', message: i.message })) };
  const checked = checkInput(def, parsed.data.input);
  if (checked.problem)
    return {
      problems: [
        { path: `input.${checked.problem.split(': ')[0]}`, message: checked.problem.split(': ').slice(1).join(': ') },
      ],
    };
  return { problems: [], state };
}

/** Tool results a fork answers with instead of running the tool: by step, then tool (`{ error }` makes the call fail). */
export const ToolPinsSchema = z.record(z.string(), z.record(z.string(), z.record(z.string(), z.unknown())));
export type ToolPins = z.infer<typeof ToolPinsSchema>;

/**
 * The toolbox of a fork: a pinned tool of a step answers with its pinned result (its arguments
 * still checked against the tool's schema, as an eval mock is); every other call runs for real.
 */
export function pinnedToolbox(
  inner: Toolbox,
  tools: Readonly<Record<string, ToolDefinition>>,
  pins: ToolPins,
): Toolbox {
  const mocks = new Map(Object.entries(pins).map(([step, results]) => [step, mockToolbox(tools, results)]));
  return {
    spec: (name) => inner.spec(name),
    execute: (name, args, ctx) =>
      pins[ctx.step]?.[name] !== undefined
        ? mocks.get(ctx.step)!.execute(name, args, ctx)
        : inner.execute(name, args, ctx),
  };
}

const isStepOutput = (value: unknown): value is StepOutput =>
  typeof value === 'object' && value !== null && 'next' in value && 'toolCalls' in value;

/** The step outputs of an execution, in trail order (Task states named as a step). */
function stepOutputs(
  record: Pick<ExecutionRecord, 'events'>,
  def: WorkflowDefinition,
): { step: string; output?: StepOutput; error?: string }[] {
  const names = new Set(def.steps.map((s) => s.name));
  return stepTrail(record.events)
    .filter((s) => names.has(s.name))
    .map((s) => ({
      step: s.name,
      ...(isStepOutput(s.output) && { output: s.output }),
      ...(s.error && { error: s.error.error }),
    }));
}

/** The tool results a step's recorded run got: what a fork of it pins by default. */
export function recordedToolResults(
  record: Pick<ExecutionRecord, 'events'>,
  def: WorkflowDefinition,
  point: ForkPoint,
): Record<string, Record<string, unknown>> {
  const output = stepOutputs(record, def)[point.index]?.output;
  const results: Record<string, Record<string, unknown>> = {};
  for (const call of output?.toolCalls ?? [])
    if (
      call.error === undefined &&
      call.result &&
      typeof call.result === 'object' &&
      !(call.result as { summarized?: unknown }).summarized
    )
      results[call.tool] = call.result as Record<string, unknown>;
  return results;
}

/** What the step answered in the recorded run at `point`: its route and outputs. */
export function recordedAnswer(
  record: Pick<ExecutionRecord, 'events'>,
  def: WorkflowDefinition,
  point: ForkPoint,
): { next?: string; fields?: Record<string, unknown> } {
  const output = stepOutputs(record, def)[point.index]?.output;
  return output ? { next: output.next, fields: output.fields } : {};
}

/** The body of the untrusted email the execution's LLM steps were shown, from their recorded model requests. */
export function emailBodyFromTranscripts(
  record: Pick<ExecutionRecord, 'events'>,
  def: WorkflowDefinition,
): string | undefined {
  for (const { output } of stepOutputs(record, def)) {
    const messages = output?.transcript?.messages;
    const context = messages && readStepContext({ system: [], messages });
    const body = (context?.untrusted as { email?: { body?: unknown } } | undefined)?.email?.body;
    if (typeof body === 'string') return body;
  }
  return undefined;
}

/** One step of two runs side by side. */
export interface StepDiff {
  index: number;
  a?: StepSide;
  b?: StepSide;
  /** What differs: `step`, `next`, `fields`, `reply`, `tokens`, `error`. */
  differs: string[];
}

export interface StepSide {
  step: string;
  next?: string;
  reason?: string;
  fields?: Record<string, unknown>;
  reply?: string;
  usage?: TokenUsage;
  error?: string;
}

/** Two executions side by side: their paths, step by step, and their totals. */
export interface ExecutionDiff {
  a: { name: string; status: string; path: string[]; usage: TokenUsage };
  b: { name: string; status: string; path: string[]; usage: TokenUsage };
  steps: StepDiff[];
  /** The first position where the two paths differ; null when they took the same path. */
  divergesAt: number | null;
  /** What the fork (`b`) changed at its fork point, when `b` is a fork of `a`. */
  changes: ForkChange[];
}

function side(s: ReturnType<typeof stepOutputs>[number]): StepSide {
  const out = s.output;
  return {
    step: s.step,
    ...(out
      ? {
          next: out.next,
          reason: out.reason,
          fields: out.fields,
          usage: out.usage,
          ...(out.reply !== undefined && { reply: out.reply }),
        }
      : {}),
    ...(s.error && { error: s.error }),
  };
}

/** Compare two runs of a workflow (a fork and its parent) step by step: path, outputs, replies, tokens. */
export function diffExecutions(a: ExecutionRecord, b: ExecutionRecord, def: WorkflowDefinition): ExecutionDiff {
  const [sa, sb] = [stepOutputs(a, def).map(side), stepOutputs(b, def).map(side)];
  const same = (x: unknown, y: unknown) => JSON.stringify(x) === JSON.stringify(y);
  const steps: StepDiff[] = Array.from({ length: Math.max(sa.length, sb.length) }, (_, index) => {
    const [x, y] = [sa[index], sb[index]];
    const differs =
      !x || !y ? ['step'] : (['step', 'next', 'fields', 'reply', 'error'] as const).filter((k) => !same(x[k], y[k]));
    if (x && y && !same(x.usage, y.usage)) differs.push('tokens');
    return { index, ...(x && { a: x }), ...(y && { b: y }), differs };
  });
  const path = (s: StepSide[]) => s.map((x) => x.step);
  const divergesAt = steps.find((s) => s.differs.includes('step') || s.differs.includes('next'))?.index ?? null;
  const total = (s: StepSide[]) => sumUsage(s.map((x) => x.usage));
  return {
    a: { name: a.name, status: a.status, path: path(sa), usage: total(sa) },
    b: { name: b.name, status: b.status, path: path(sb), usage: total(sb) },
    steps,
    divergesAt,
    changes: b.parent?.execution === a.name ? (b.parent.changes ?? []) : [],
  };
}

/** A fork's name: the parent's, cut to leave room, then `-fork-` and a short random id (execution names have at most 80 characters). */
export function forkName(parent: string, random: string): string {
  return `${parent.slice(0, 80 - 6 - random.length)}-fork-${random}`;
}

/** The events of the parent a fork keeps: everything before its start state was entered. */
export const forkHistory = (record: Pick<ExecutionRecord, 'events'>, point: ForkPoint): HistoryEvent[] =>
  record.events.slice(0, point.eventIndex);
