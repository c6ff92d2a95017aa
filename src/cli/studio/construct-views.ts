/**
 * What Studio shows of a construct step, read from the history: a map step's items, a parallel
 * step's branches, a workflow step's child execution, a wait's deadline, an event step's awaited
 * event and how the wait ended. Pure, like views.ts, which places these on the steps it lists.
 */
import type { HistoryEvent } from '@aws-sdk/client-sfn';
import { eventWaitStateName } from '../../definitions/workflow/constructs/event.ts';
import { causeMessage, mapStateName } from '../../definitions/workflow/constructs/map.ts';
import { parallelStateName } from '../../definitions/workflow/constructs/parallel.ts';
import { waitStateName } from '../../definitions/workflow/constructs/wait.ts';
import type { StepDefinition } from '../../definitions/workflow/schema.ts';
import { parentExecutionArn } from '../../local/asl/child-executions.ts';
import { waitEnd } from '../../local/asl/waits.ts';
import { EventWaitRequestSchema } from '../../runtime/triggers/event-wait/waits.ts';

/** How an item or a branch ended; `running` while it has no result yet. */
export type InnerStatus = 'succeeded' | 'failed' | 'running';

/** One item of a map step, or one branch of a parallel step. */
export interface InnerRun {
  status: InnerStatus;
  /** The step that ended it, and its outputs (the item's or branch's result). */
  step?: string;
  fields?: Record<string, unknown>;
  error?: { error: string; message: string };
  /** The positions of its steps among the execution's steps. */
  steps: number[];
}

export type ConstructView =
  | { kind: 'map'; output: string; items: (InnerRun & { index: number })[] }
  | { kind: 'parallel'; branches: (InnerRun & { name: string })[] }
  | { kind: 'workflow'; workflow: string; child?: { execution: string; status?: string } }
  | {
      kind: 'wait';
      /** The declared wait: a duration, or the state path of a timestamp. */
      seconds?: number;
      until?: string;
      /** When it ends (a duration after it started, or the timestamp read from the state). */
      deadline?: string;
      crossed: boolean;
    }
  | {
      kind: 'event';
      source: string;
      detailType: string;
      /** The state path of the correlation key, and its value in this execution. */
      key: string;
      keyValue?: unknown;
      timeoutSeconds: number;
      deadline?: string;
      onTimeout?: string;
      outcome: 'waiting' | 'resumed' | 'timed out' | 'failed';
      /** The detail of the event that resumed it. */
      detail?: unknown;
      error?: { error: string; message: string };
    };

/** Where an inner step ran: inside which construct step, and which item or branch. */
export interface Within {
  step: string;
  item?: number;
  branch?: string;
}

/** A step of the execution as the construct views need it: its name, where it ran, its events. */
export interface PlacedStep {
  index: number;
  name: string;
  within?: Within;
  /** Its first and last event, by position in the history. */
  at: number;
  end: number;
}

type AslState = {
  Type: string;
  Seconds?: number;
  TimestampPath?: string;
  Branches?: { StartAt: string; States: Record<string, unknown> }[];
  ItemProcessor?: { States: Record<string, unknown> };
  Iterator?: { States: Record<string, unknown> };
};

/** Parse a history payload; one that is not JSON (truncated) stays a string. */
export function parsePayload(text: string | undefined): unknown {
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

const errorOf = (e: { Error?: string; Cause?: string } | null | undefined) =>
  e ? { error: e.Error ?? 'Error', message: causeMessage(e.Cause ?? '').split('\n')[0]! } : undefined;

/** The execution name an execution ARN ends with. */
const executionName = (arn: string): string => arn.slice(arn.lastIndexOf(':') + 1);

/**
 * For each state inside a map's items or a parallel's branches, the construct step it belongs to
 * (and the branch): from the compiled definition, since an inner step's input names its item but
 * not its branch.
 */
export function innerStates(
  states: Record<string, unknown>,
  steps: ReadonlyMap<string, StepDefinition>,
): Map<string, Within> {
  const within = new Map<string, Within>();
  for (const step of steps.values()) {
    const state = states[step.kind === 'map' ? mapStateName(step.name) : parallelStateName(step.name)] as
      | AslState
      | undefined;
    if (step.kind === 'map' && state)
      for (const name of Object.keys((state.ItemProcessor ?? state.Iterator)?.States ?? {}))
        within.set(name, { step: step.name });
    if (step.kind === 'parallel' && state)
      for (const b of state.Branches ?? [])
        for (const name of Object.keys(b.States))
          within.set(name, { step: step.name, branch: b.StartAt.slice(step.name.length + 1) });
  }
  return within;
}

/** The item an inner step's input names (`item: { map, index }`), if any. */
export function itemOf(input: unknown): number | undefined {
  const item = (input as { item?: { index?: unknown } } | null)?.item;
  return typeof item?.index === 'number' ? item.index : undefined;
}

/** The results the items or branches of `step` ended with, between events `from` and `to`. */
function innerResults(events: readonly HistoryEvent[], step: string, from: number, to: number) {
  const results: Record<string, unknown>[] = [];
  for (let i = from; i <= to; i++) {
    const e = events[i]!;
    const name = e.stateExitedEventDetails?.name ?? '';
    if (e.type !== 'PassStateExited' || !name.startsWith(`${step}.`) || !/\.(done|failed)$/.test(name)) continue;
    const output = parsePayload(e.stateExitedEventDetails?.output);
    if (output && typeof output === 'object') results.push(output as Record<string, unknown>);
  }
  return results;
}

const innerRun = (result: Record<string, unknown> | undefined, steps: number[]): InnerRun => ({
  status: !result ? 'running' : result.ok ? 'succeeded' : 'failed',
  ...(typeof result?.step === 'string' && { step: result.step }),
  ...(result?.ok === true && { fields: (result.fields ?? {}) as Record<string, unknown> }),
  ...(result?.ok === false && { error: errorOf(result.error as { Error?: string; Cause?: string }) }),
  steps,
});

/** The last event before `before` that entered state `name`. */
const lastEntered = (events: readonly HistoryEvent[], name: string, before: number) =>
  events.findLastIndex(
    (e, i) => i < before && e.type?.endsWith('StateEntered') && e.stateEnteredEventDetails?.name === name,
  );

/** What a construct view is read from. */
export interface ConstructContext {
  step: StepDefinition;
  events: readonly HistoryEvent[];
  /** The step itself, and every step of the execution (to name each item's and branch's steps). */
  self: PlacedStep;
  placed: readonly PlacedStep[];
  /** What its Task returned, or how it failed. */
  output: unknown;
  error?: { error: string; cause?: string };
  /** The compiled top-level states. */
  states: Record<string, unknown>;
}

/** The steps that ran inside the construct step `c`, after event `from`. */
const innerSteps = (c: ConstructContext, from: number) =>
  c.placed.filter((p) => p.within?.step === c.step.name && p.at > from && p.at < c.self.at);

function mapView(c: ConstructContext): ConstructView | undefined {
  const state = mapStateName(c.step.name);
  const from = lastEntered(c.events, state, c.self.at);
  if (from < 0 || !c.step.map) return undefined;
  const results = innerResults(c.events, c.step.name, from, c.self.at);
  const started = c.events.flatMap((e, i) =>
    i > from && i < c.self.at && e.type === 'MapIterationStarted' && e.mapIterationStartedEventDetails?.name === state
      ? [e.mapIterationStartedEventDetails.index ?? 0]
      : [],
  );
  const steps = innerSteps(c, from);
  const indexes = [...new Set([...started, ...results.map((r) => r.index as number)])].sort((a, b) => a - b);
  return {
    kind: 'map',
    output: c.step.map.output,
    items: indexes.map((index) => ({
      index,
      ...innerRun(
        results.find((r) => r.index === index),
        steps.filter((p) => p.within?.item === index).map((p) => p.index),
      ),
    })),
  };
}

function parallelView(c: ConstructContext): ConstructView | undefined {
  const from = lastEntered(c.events, parallelStateName(c.step.name), c.self.at);
  if (from < 0 || !c.step.parallel) return undefined;
  const results = innerResults(c.events, c.step.name, from, c.self.at);
  const steps = innerSteps(c, from);
  return {
    kind: 'parallel',
    branches: Object.keys(c.step.parallel.branches).map((name) => ({
      name,
      ...innerRun(
        results.find((r) => r.branch === name),
        steps.filter((p) => p.within?.branch === name).map((p) => p.index),
      ),
    })),
  };
}

function workflowView(c: ConstructContext): ConstructView | undefined {
  if (!c.step.workflow) return undefined;
  // The `.sync` Task's output describes the child; a failed child's description is the error's cause.
  const described = (c.output ?? parsePayload(c.error?.cause)) as
    | { ExecutionArn?: unknown; Status?: unknown }
    | undefined;
  const arn = typeof described?.ExecutionArn === 'string' ? described.ExecutionArn : undefined;
  return {
    kind: 'workflow',
    workflow: c.step.workflow.name,
    ...(arn && {
      child: {
        execution: executionName(arn),
        ...(typeof described?.Status === 'string' && { status: described.Status }),
      },
    }),
  };
}

function waitView(c: ConstructContext): ConstructView | undefined {
  if (!c.step.wait) return undefined;
  const name = waitStateName(c.step.name);
  const state = c.states[name] as AslState | undefined;
  const entered = c.events[c.self.at]!;
  let deadline: string | undefined;
  try {
    const input = parsePayload(entered.stateEnteredEventDetails?.input);
    deadline = state && waitEnd(state, input, new Date(entered.timestamp!)).toISOString();
  } catch {
    // A timestamp that cannot be read fails the state: there is no deadline to show.
  }
  return {
    kind: 'wait',
    ...(c.step.wait.seconds !== undefined && { seconds: c.step.wait.seconds }),
    ...(c.step.wait.until !== undefined && { until: c.step.wait.until }),
    ...(deadline && { deadline }),
    crossed: c.events.some(
      (e, i) => i > c.self.at && e.type === 'WaitStateExited' && e.stateExitedEventDetails?.name === name,
    ),
  };
}

function eventView(c: ConstructContext): ConstructView | undefined {
  if (!c.step.event) return undefined;
  const { source, detailType, key, timeoutSeconds, onTimeout } = c.step.event;
  const range = c.events.slice(c.self.at, c.self.end + 1);
  const scheduled = range.find((e) => e.type === 'TaskScheduled');
  const parameters = parsePayload(scheduled?.taskScheduledEventDetails?.parameters) as
    | { Payload?: unknown }
    | undefined;
  const request = EventWaitRequestSchema.safeParse(parameters?.Payload).data;
  const started = c.events[c.self.at]!.timestamp;
  const timedOut = range.some((e) => e.type === 'TaskTimedOut');
  return {
    kind: 'event',
    source,
    detailType,
    key,
    ...(request && { keyValue: request.key }),
    timeoutSeconds,
    ...(started && { deadline: new Date(new Date(started).getTime() + timeoutSeconds * 1000).toISOString() }),
    ...(onTimeout && { onTimeout }),
    outcome: timedOut ? 'timed out' : c.error ? 'failed' : c.output !== undefined ? 'resumed' : 'waiting',
    ...(c.output !== undefined && { detail: c.output }),
    ...(c.error && !timedOut && { error: { error: c.error.error, message: causeMessage(c.error.cause ?? '') } }),
  };
}

const VIEWS: Partial<Record<StepDefinition['kind'], (c: ConstructContext) => ConstructView | undefined>> = {
  map: mapView,
  parallel: parallelView,
  workflow: workflowView,
  wait: waitView,
  event: eventView,
};

/** What a construct step ran (none for another step, or a construct that has not started its states). */
export const constructView = (c: ConstructContext): ConstructView | undefined => VIEWS[c.step.kind]?.(c);

/** The wait Task an event step stands for (`<step>.wait-event`). */
export const eventStepOf = (state: string, steps: ReadonlyMap<string, StepDefinition>): string | undefined => {
  const step = state.endsWith('.wait-event') ? state.slice(0, -'.wait-event'.length) : undefined;
  return step && steps.get(step)?.kind === 'event' && eventWaitStateName(step) === state ? step : undefined;
};

/** The execution that started this one through a workflow step, by name. */
export function startedBy(input: unknown): string | undefined {
  const arn = parentExecutionArn(input);
  return arn && executionName(arn);
}
