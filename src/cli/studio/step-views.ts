/**
 * One execution's steps as Studio lists them, read from its history: every step (and checkpoint) in the order
 * entered with its input, output, decision, retries and latency, the model request and response with tokens and
 * cost, tool calls, and what a construct step ran. Pure, like views.ts, which puts them in the execution view.
 */

import type { HistoryEvent } from '@aws-sdk/client-sfn';
import type { StateMachineDefinition } from 'aws-local-stepfunctions';
import { waitStateName } from '../../definitions/workflow/constructs/wait.ts';
import type { StepDefinition, WorkflowDefinition } from '../../definitions/workflow/schema.ts';
import { modelCost, type Prices } from '../../evals/cost.ts';
import { type ExecutionRecord, stepTrail, type TrailStep } from '../../local/records/history.ts';
import type { StepOutput, TokenUsage } from '../../runtime/contracts/step.ts';
import {
  type ConstructView,
  constructView,
  eventStepOf,
  innerStates,
  itemOf,
  type PlacedStep,
  parsePayload,
  type Within,
} from './construct-views.ts';

/** A step's cost at list prices; `note` says when nothing was billed (the offline stand-in) or there are no prices. */
export interface CostView {
  usd: number;
  modelId: string;
  note?: string;
}

/** One step of an execution as Studio shows it. */
export interface StepView {
  /** Position among the states of the trail (steps and pauses). */
  index: number;
  /** Position among the steps (what a fork names); absent for a pause. */
  forkIndex?: number;
  name: string;
  kind: StepDefinition['kind'] | 'pause' | 'task';
  description?: string;
  /** A step inside a map step's item or a parallel step's branch. */
  within?: Within;
  /** A construct step: its items, branches, child execution, deadline or awaited event. */
  construct?: ConstructView;
  enteredAt: string;
  exitedAt?: string;
  /** Entered to exited, in the history. */
  latencyMs?: number;
  /** What the step handler measured. */
  durationMs?: number;
  retries: number;
  input: unknown;
  output?: unknown;
  decision?: { next: string; decidedBy: string | null; reason: string };
  /** Why the offline stand-in (or a fork's pinned answer) routed so: the rule that decided and what matched. */
  why?: string;
  error?: { error: string; cause?: string };
  usage?: TokenUsage;
  cost?: CostView;
  toolCalls: StepOutput['toolCalls'];
  transcript?: StepOutput['transcript'];
  reply?: string;
  consensus?: StepOutput['consensus'];
  /** The ids of its events in the history (first, last). */
  events: [number, number];
}

/** What a step's (or an execution's) model calls cost at the model's list prices; nothing without a call. */
export function costOf(
  usage: TokenUsage | undefined,
  modelId: string,
  provider: string | undefined,
  prices: Prices,
): CostView | undefined {
  if (!usage || usage.modelCalls === 0) return undefined;
  if (!prices.models[modelId])
    return { usd: 0, modelId, note: `no list prices for ${modelId} in src/evals/prices.json` };
  const usd = modelCost(usage, prices, modelId).total;
  return {
    usd,
    modelId,
    ...(provider === 'offline' && { note: 'the offline stand-in: nothing was billed; at this model’s list prices' }),
  };
}

const isStepOutput = (value: unknown): value is StepOutput =>
  typeof value === 'object' && value !== null && 'next' in value && 'toolCalls' in value;

/** One step of the history before it is shown: its trail entry, the step, where its events start. */
interface Row {
  at: number;
  trail: TrailStep;
  /** The state that stands for it: the step's Task, its checkpoint, a wait's Wait state, an event step's wait Task. */
  state: string;
  name: string;
  kind: StepView['kind'];
  step?: StepDefinition;
}

/** A wait step's Wait state as a trail entry: it runs no Task. */
function waitRow(events: readonly HistoryEvent[], at: number, step: StepDefinition): Row {
  const entered = events[at]!;
  const state = entered.stateEnteredEventDetails!.name!;
  const exited = events.find(
    (e, j) => j > at && e.type === 'WaitStateExited' && e.stateExitedEventDetails?.name === state,
  );
  return {
    at,
    state,
    name: step.name,
    kind: 'wait',
    step,
    trail: {
      name: step.name,
      type: 'Wait',
      enteredAt: new Date(entered.timestamp!),
      ...(exited && { exitedAt: new Date(exited.timestamp!) }),
      input: parsePayload(entered.stateEnteredEventDetails?.input),
      ...(exited && { output: parsePayload(exited.stateExitedEventDetails?.output) }),
      retries: 0,
    },
  };
}

/**
 * The steps (and checkpoints) of an execution, in the order entered, each with the range of its events; with the
 * definition known, the other Task states are left out. A wait step is its Wait state, an event step its wait Task;
 * a step inside an item or a branch says which; a construct step carries what it ran (see construct-views.ts).
 */
export function stepViews(
  record: ExecutionRecord,
  def: WorkflowDefinition | undefined,
  definition: Pick<StateMachineDefinition, 'States'> | undefined,
  modelId: string,
  prices: Prices,
): StepView[] {
  const steps = new Map(def?.steps.map((s) => [s.name, s]) ?? []);
  const { events } = record;
  const rows = stepRows(events, steps, def !== undefined);
  const placed = placedSteps(rows, events, innerStates(definition?.States ?? {}, steps));
  // Fork points are the steps' Task entries in the same order, so the n-th of them is fork point n.
  let forks = 0;
  return rows.map(({ trail: t, state, name, kind, step }, index): StepView => {
    const { at, end, within: inside } = placed[index]!;
    const construct =
      step &&
      constructView({
        step,
        events,
        self: placed[index]!,
        placed,
        output: t.output,
        ...(t.error && { error: t.error }),
        states: definition?.States ?? {},
      });
    const out = isStepOutput(t.output) ? t.output : undefined;
    const transcript = out?.transcript;
    return {
      index,
      ...(step && state === step.name && t.type === 'Task' && { forkIndex: forks++ }),
      name,
      kind,
      ...(step && { description: step.description }),
      ...(inside && { within: inside }),
      ...(construct && { construct }),
      enteredAt: t.enteredAt.toISOString(),
      ...(t.exitedAt && {
        exitedAt: t.exitedAt.toISOString(),
        latencyMs: t.exitedAt.getTime() - t.enteredAt.getTime(),
      }),
      ...(out && { durationMs: out.durationMs }),
      retries: t.retries,
      input: t.input,
      ...(t.output !== undefined && { output: t.output }),
      ...(out && { decision: { next: out.next, decidedBy: out.decidedBy, reason: out.reason } }),
      ...(whyRouted(transcript) && { why: whyRouted(transcript) }),
      ...(t.error && { error: t.error }),
      ...(out?.usage && { usage: out.usage }),
      ...(out?.usage && { cost: costOf(out.usage, transcript?.modelId ?? modelId, transcript?.provider, prices) }),
      toolCalls: out?.toolCalls ?? [],
      ...(transcript && { transcript }),
      ...(out?.reply !== undefined && { reply: out.reply }),
      ...(out?.consensus && { consensus: out.consensus }),
      events: [events[at]!.id!, events[end]!.id!],
    };
  });
}

/**
 * The states that stand for steps, in the order entered: the trail's Tasks (with `onlySteps`, those of a step or its
 * pause) and the Wait state of each wait step, which runs no Task.
 */
function stepRows(events: HistoryEvent[], steps: ReadonlyMap<string, StepDefinition>, onlySteps: boolean): Row[] {
  // The trail has one entry per TaskStateEntered, in event order: its events start there.
  const entered = events.flatMap((e, i) => (e.type === 'TaskStateEntered' ? [i] : []));
  const rows: Row[] = stepTrail(events).flatMap((t, i): Row[] => {
    const step = steps.get(t.name) ?? steps.get(eventStepOf(t.name, steps) ?? '');
    const isPause = t.name.endsWith('.pause') && steps.has(t.name.slice(0, -'.pause'.length));
    if (onlySteps && !step && !isPause) return [];
    const kind = step ? step.kind : isPause ? 'pause' : 'task';
    return [{ at: entered[i]!, trail: t, state: t.name, name: step?.name ?? t.name, kind, ...(step && { step }) }];
  });
  events.forEach((e, at) => {
    const name = e.type === 'WaitStateEntered' ? e.stateEnteredEventDetails?.name : undefined;
    const step = steps.get(name?.replace(/\.wait$/, '') ?? '');
    if (step?.kind === 'wait' && name === waitStateName(step.name)) rows.push(waitRow(events, at, step));
  });
  return rows.sort((a, b) => a.at - b.at);
}

/** Each row where the construct views find it: its first and last event, and the item or branch it ran in. */
function placedSteps(
  rows: readonly Row[],
  events: readonly HistoryEvent[],
  within: ReadonlyMap<string, Within>,
): PlacedStep[] {
  return rows.map(({ at, state, name, trail }, index) => {
    const exit = events.findIndex(
      (e, j) => j > at && e.type?.endsWith('StateExited') && e.stateExitedEventDetails?.name === state,
    );
    const inside = within.get(state);
    const item = itemOf(trail.input);
    return {
      index,
      name,
      at,
      end: exit < 0 ? events.length - 1 : exit,
      ...(inside && { within: { ...inside, ...(item !== undefined && { item }) } }),
    };
  });
}

/** What the last answer of a stand-in says decided the route: `rule 2 of 4: found serial "SN1"; …`. */
function whyRouted(transcript: StepOutput['transcript']): string | undefined {
  const last = transcript?.messages.findLast((m) => m.role === 'assistant');
  const said = last?.content.flatMap((b) => ('text' in b ? [b.text] : [])).join(' ') ?? '';
  return /^\[(?:offline stand-in, not an LLM|pinned in a fork)\] step [^:]+: (.+)$/s.exec(said)?.[1];
}
