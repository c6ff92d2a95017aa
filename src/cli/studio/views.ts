/**
 * What Studio shows, computed from the same records and compiled definitions the CLI reads: the
 * graph of a workflow (its synthesized ASL, laid out with dagre), the list of executions, one
 * execution step by step (decision, model request, tool calls, tokens and cost), and the path it
 * took on the graph. Pure: the server reads the files and passes them in.
 */

import type { HistoryEvent } from '@aws-sdk/client-sfn';
import { Graph, layout } from '@dagrejs/dagre';
import type { StateMachineDefinition } from 'aws-local-stepfunctions';
import { MAX_STEPS_HANDOFF } from '../../cdk/constructs/agent-workflow.ts';
import type { StepDefinition, WorkflowDefinition } from '../../definitions/workflow/schema.ts';
import { modelCost, type Prices } from '../../evals/cost.ts';
import { aboutOf, outcomeOf } from '../../local/execution-list.ts';
import { type ExecutionRecord, type ExecutionSource, stateTransitions, stepTrail } from '../../local/history.ts';
import type { StepStats, WorkflowStats } from '../../local/step-stats.ts';
import type { StepOutput, TokenUsage } from '../../runtime/contracts.ts';

/** One state of the graph, placed. */
export interface GraphNode {
  id: string;
  kind:
    | StepDefinition['kind']
    | 'choice'
    | 'pass'
    | 'map'
    | 'pause'
    | 'succeed'
    | 'fail'
    | 'task'
    | 'parallel'
    | 'wait';
  label: string;
  /** The step it belongs to (`<step>.route` → the step). */
  step?: string;
  comment?: string;
  /** Entry step, fallback step. */
  role?: 'entry' | 'fallback';
  /** For a Map: the states it runs per item (a consensus wave's sample). */
  inner?: string[];
  x: number;
  y: number;
  width: number;
  height: number;
  /** The per-step figures of `stepwise stats` (steps only). */
  stats?: Pick<
    StepStats,
    'runs' | 'failures' | 'retries' | 'handoffs' | 'meanDurationMs' | 'modelCalls' | 'inputTokens' | 'outputTokens'
  >;
}

/**
 * One transition of the graph: `next` (Next), `route` (a Choice rule), `default` (a Choice Default), `catch` (a Catch).
 */
export interface GraphEdge {
  from: string;
  to: string;
  kind: 'next' | 'route' | 'default' | 'catch';
  label?: string;
  points: { x: number; y: number }[];
}

export interface WorkflowGraph {
  width: number;
  height: number;
  nodes: GraphNode[];
  edges: GraphEdge[];
  /**
   * Transitions left out of the drawing because every step has them: the step-count breaker and the Catch to the
   * fallback.
   */
  notes: string[];
}

type AslState = {
  Type: string;
  Next?: string;
  Default?: string;
  Comment?: string;
  Choices?: { Next: string }[];
  Catch?: { Next: string; ErrorEquals: string[] }[];
  ItemProcessor?: { States: Record<string, AslState> };
  Iterator?: { States: Record<string, AslState> };
  Resource?: string;
};

const KIND: Record<string, GraphNode['kind']> = {
  Choice: 'choice',
  Pass: 'pass',
  Map: 'map',
  Succeed: 'succeed',
  Fail: 'fail',
  Parallel: 'parallel',
  Wait: 'wait',
};

/** The step a generated state belongs to: `<step>.<anything>` → `<step>`. */
function ownerStep(state: string, steps: ReadonlySet<string>): string | undefined {
  if (steps.has(state)) return state;
  const dot = state.indexOf('.');
  return dot > 0 && steps.has(state.slice(0, dot)) ? state.slice(0, dot) : undefined;
}

/**
 * The graph of a compiled workflow: every top-level state of its ASL (steps, route Choices,
 * consensus waves as Map states, pauses, counter checks, terminal states), with its `Comment`, laid
 * out top to bottom. A route Choice's rules become labelled edges; the step-count breaker into
 * `MaxStepsHandoff` and the Catch of every step to the fallback are not drawn (each step has them)
 * but named in `notes`.
 */
export function workflowGraph(
  def: WorkflowDefinition,
  definition: Pick<StateMachineDefinition, 'States' | 'StartAt'>,
  stats?: WorkflowStats,
): WorkflowGraph {
  const layout = graphLayout(def, definition);
  return stats ? withFigures(layout, stats) : layout;
}

/** A laid-out graph with each step's figures from `stats`. */
export function withFigures(layout: WorkflowGraph, stats: WorkflowStats): WorkflowGraph {
  const figures = new Map(stats.steps.map((s) => [s.step, s]));
  return {
    ...layout,
    nodes: layout.nodes.map((n) =>
      (n.kind !== 'llm' && n.kind !== 'code') || !figures.has(n.id)
        ? n
        : { ...n, stats: stepFigures(figures.get(n.id)!) },
    ),
  };
}

/** The figures a step's node shows. */
const stepFigures = (s: StepStats): NonNullable<GraphNode['stats']> => ({
  runs: s.runs,
  failures: s.failures,
  retries: s.retries,
  handoffs: s.handoffs,
  meanDurationMs: s.meanDurationMs,
  modelCalls: s.modelCalls,
  inputTokens: s.inputTokens,
  outputTokens: s.outputTokens,
});

/**
 * The layout of a compiled workflow's graph (see {@link workflowGraph}), without figures: it
 * depends only on the definition, so a caller may keep it.
 */
export function graphLayout(
  def: WorkflowDefinition,
  definition: Pick<StateMachineDefinition, 'States' | 'StartAt'>,
): WorkflowGraph {
  const steps = new Map(def.steps.map((s) => [s.name, s]));
  const names = new Set(steps.keys());
  const g = new Graph({ multigraph: true });
  g.setGraph({ rankdir: 'TB', nodesep: 28, ranksep: 44, marginx: 16, marginy: 16 });
  g.setDefaultEdgeLabel(() => ({}));
  const states = definition.States as Record<string, AslState>;
  const nodes = new Map<string, UnplacedNode>();
  for (const [id, state] of Object.entries(states)) {
    const node = graphNode(id, state, def, steps, names);
    nodes.set(id, node);
    g.setNode(id, { width: node.width, height: node.height });
  }
  const edges = drawnEdges(states, names, nodes);
  edges.forEach((e, i) => g.setEdge(e.from, e.to, { weight: e.kind === 'default' ? 1 : 2, minlen: 1 }, String(i)));
  layout(g);
  const placed = [...nodes.values()].map((n) => {
    const { x, y } = g.node(n.id);
    return { ...n, x: x - n.width / 2, y: y - n.height / 2 };
  });
  const laidEdges = edges.map((e, i) => ({
    ...e,
    points: (g.edge({ v: e.from, w: e.to, name: String(i) })?.points ?? []).map(
      ({ x, y }: { x: number; y: number }) => ({ x, y }),
    ),
  }));
  const { width = 0, height = 0 } = g.graph();
  const notes = [
    `Every step's route Choice sends a route past maxSteps (${def.manifest.maxSteps}) to ${MAX_STEPS_HANDOFF} → ${def.manifest.fallback}.`,
    `Every step catches its errors (after its retries) to the fallback ${def.manifest.fallback}.`,
  ];
  return { width, height, nodes: placed, edges: laidEdges, notes };
}

type UnplacedNode = Omit<GraphNode, 'x' | 'y'>;

/** One top-level state as a node: its kind, the step it belongs to, its role, and a size that fits its name. */
function graphNode(
  id: string,
  state: AslState,
  def: WorkflowDefinition,
  steps: ReadonlyMap<string, StepDefinition>,
  names: ReadonlySet<string>,
): UnplacedNode {
  const step = steps.get(id);
  const kind: GraphNode['kind'] = step
    ? step.kind
    : state.Type === 'Task'
      ? /waitForTaskToken/.test(state.Resource ?? '')
        ? 'pause'
        : 'task'
      : (KIND[state.Type] ?? 'task');
  const inner = state.Type === 'Map' ? Object.keys((state.ItemProcessor ?? state.Iterator)?.States ?? {}) : undefined;
  // Wide enough for the whole name at 12 px (about 7 px a character).
  const width = Math.max(step ? 190 : kind === 'choice' ? 150 : 160, Math.ceil(id.length * 7.2) + 24);
  // Steps keep room for their figures whether there are any yet: the layout does not depend on them.
  const height = step ? 62 : 34;
  const owner = ownerStep(id, names);
  return {
    id,
    kind,
    label: id,
    ...(owner && { step: owner }),
    ...(state.Comment && { comment: state.Comment }),
    ...(id === def.manifest.entry && { role: 'entry' as const }),
    ...(id === def.manifest.fallback && { role: 'fallback' as const }),
    ...(inner && { inner }),
    width,
    height,
  };
}

/**
 * The transitions drawn, one of each kind between two states: every Next, every Choice rule but a route's step-count
 * breaker, and the Catch of the states that are not steps.
 */
function drawnEdges(
  states: Record<string, AslState>,
  names: ReadonlySet<string>,
  nodes: ReadonlyMap<string, UnplacedNode>,
): Omit<GraphEdge, 'points'>[] {
  const edges: Omit<GraphEdge, 'points'>[] = [];
  for (const [id, state] of Object.entries(states)) {
    if (state.Next) edges.push({ from: id, to: state.Next, kind: 'next' });
    if (state.Type === 'Choice') {
      const isRoute = id.endsWith('.route');
      for (const rule of state.Choices ?? [])
        if (!(isRoute && rule.Next === MAX_STEPS_HANDOFF)) edges.push({ from: id, to: rule.Next, kind: 'route' });
      if (state.Default) edges.push({ from: id, to: state.Default, kind: 'default', label: 'otherwise' });
    }
    // A pause's Catch (timeout → the escalation step, rejection → the fallback) is its own; every step's Catch to the
    // fallback is not drawn.
    if (state.Type === 'Task' && !names.has(id))
      for (const c of state.Catch ?? [])
        edges.push({ from: id, to: c.Next, kind: 'catch', label: c.ErrorEquals.join(', ') });
  }
  const seen = new Set<string>();
  return edges.filter((e) => {
    const key = `${e.from}|${e.to}|${e.kind}`;
    if (seen.has(key) || !nodes.has(e.to)) return false;
    seen.add(key);
    return true;
  });
}

/** Where an execution went on the graph: the top-level states it entered (how often), and the transitions between them. */
export interface ExecutionPath {
  states: Record<string, number>;
  edges: [string, string][];
}

/** The top-level states an execution entered, in order, and each transition between consecutive ones. */
export function executionPath(
  events: readonly HistoryEvent[],
  definition: Pick<StateMachineDefinition, 'States'>,
): ExecutionPath {
  const states: Record<string, number> = {};
  const edges: [string, string][] = [];
  let previous: string | undefined;
  for (const e of events) {
    const name = e.type?.endsWith('StateEntered') ? e.stateEnteredEventDetails?.name : undefined;
    if (!name || !(name in definition.States)) continue;
    states[name] = (states[name] ?? 0) + 1;
    if (previous !== undefined && !edges.some(([a, b]) => a === previous && b === name)) edges.push([previous, name]);
    previous = name;
  }
  return { states, edges };
}

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

export interface ExecutionView {
  record: Omit<ExecutionRecord, 'events' | 'startDate' | 'stopDate'> & {
    startDate: string;
    stopDate?: string;
    source: ExecutionSource;
    outcome?: string;
    about: Record<string, string>;
  };
  steps: StepView[];
  path: ExecutionPath;
  usage: TokenUsage;
  cost?: CostView;
  stateTransitions: number;
  /** How many history events it has (the events are fetched when shown: they repeat every input and output). */
  eventCount: number;
}

const ZERO: TokenUsage = {
  modelCalls: 0,
  inputTokens: 0,
  outputTokens: 0,
  cacheReadInputTokens: 0,
  cacheWriteInputTokens: 0,
};

function costOf(
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

/**
 * One execution step by step: every step (and checkpoint) it ran with its input, output,
 * decision, retries and latency, the model request and response with tokens and cost (the cost
 * model's list prices), tool calls with results, refusals and guard verdicts; the path on the graph;
 * and the raw events.
 */
export function executionView(
  record: ExecutionRecord,
  def: WorkflowDefinition | undefined,
  definition: Pick<StateMachineDefinition, 'States'> | undefined,
  prices: Prices,
  source: ExecutionSource,
): ExecutionView {
  const modelId = def?.manifest.model.id ?? '';
  const views = stepViews(record, def, modelId, prices);
  const usage = totalUsage(views);
  const provider = views.find((v) => v.transcript)?.transcript?.provider;
  const { events, startDate, stopDate, ...rest } = record;
  const outcome = outcomeOf(record, def);
  const cost = costOf(
    usage,
    views.find((v) => v.transcript?.modelId)?.transcript?.modelId ?? modelId,
    provider,
    prices,
  );
  return {
    record: {
      ...rest,
      startDate: startDate.toISOString(),
      ...(stopDate && { stopDate: stopDate.toISOString() }),
      source,
      ...(outcome && { outcome }),
      about: aboutOf(record.input, def),
    },
    steps: views,
    path: definition ? executionPath(events, definition) : { states: {}, edges: [] },
    usage,
    ...(cost && { cost }),
    stateTransitions: stateTransitions(events),
    eventCount: events.length,
  };
}

/**
 * The steps (and checkpoints) of an execution's trail, each with the range of its events; with the definition known, the
 * other Task states are left out.
 */
function stepViews(
  record: ExecutionRecord,
  def: WorkflowDefinition | undefined,
  modelId: string,
  prices: Prices,
): StepView[] {
  const steps = new Map(def?.steps.map((s) => [s.name, s]) ?? []);
  const trail = stepTrail(record.events);
  // The trail has one entry per TaskStateEntered, in event order: its events start there.
  const entered = record.events.flatMap((e, i) => (e.type === 'TaskStateEntered' ? [i] : []));
  // Fork points are the steps' Task entries in the same order, so the n-th step of the trail is fork point n.
  let forks = 0;
  const views: StepView[] = [];
  trail.forEach((t, i) => {
    const step = steps.get(t.name);
    const isPause = t.name.endsWith('.pause') && steps.has(t.name.slice(0, -'.pause'.length));
    if (def && !step && !isPause) return;
    const at = entered[i]!;
    const first = record.events[at]!.id!;
    const exit = record.events.findIndex(
      (e, j) => j > at && e.type === 'TaskStateExited' && e.stateExitedEventDetails?.name === t.name,
    );
    const last = record.events[exit < 0 ? record.events.length - 1 : exit]!.id!;
    const out = isStepOutput(t.output) ? t.output : undefined;
    const transcript = out?.transcript;
    views.push({
      index: views.length,
      ...(step && { forkIndex: forks++ }),
      name: t.name,
      kind: step ? step.kind : isPause ? 'pause' : 'task',
      ...(step && { description: step.description }),
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
      events: [first, last],
    });
  });
  return views;
}

/** What the last answer of a stand-in says decided the route: `rule 2 of 4: found serial "SN1"; …`. */
function whyRouted(transcript: StepOutput['transcript']): string | undefined {
  const last = transcript?.messages.findLast((m) => m.role === 'assistant');
  const said = last?.content.flatMap((b) => ('text' in b ? [b.text] : [])).join(' ') ?? '';
  return /^\[(?:offline stand-in, not an LLM|pinned in a fork)\] step [^:]+: (.+)$/s.exec(said)?.[1];
}

/** The token usage of the steps, summed. */
function totalUsage(views: readonly StepView[]): TokenUsage {
  return views.reduce(
    (sum, v) =>
      v.usage
        ? (Object.fromEntries(
            Object.keys(sum).map((k) => [k, sum[k as keyof TokenUsage] + v.usage![k as keyof TokenUsage]]),
          ) as unknown as TokenUsage)
        : sum,
    ZERO,
  );
}
