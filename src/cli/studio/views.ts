/**
 * What Studio shows, computed from the same records and compiled definitions the CLI reads: the
 * graph of a workflow (its synthesized ASL, laid out with dagre), the list of executions, one
 * execution step by step (decision, model request, tool calls, tokens and cost), and the path it
 * took on the graph (its steps are read in step-views.ts). Pure: the server reads the files and
 * passes them in.
 */

import type { HistoryEvent } from '@aws-sdk/client-sfn';
import { Graph, layout } from '@dagrejs/dagre';
import type { StateMachineDefinition } from 'aws-local-stepfunctions';
import { MAX_STEPS_HANDOFF } from '../../cdk/constructs/agent-workflow.ts';
import type { StepDefinition, WorkflowDefinition } from '../../definitions/workflow/schema.ts';
import type { Prices } from '../../evals/cost.ts';
import { aboutOf, outcomeOf } from '../../local/records/execution-list.ts';
import { type ExecutionRecord, type ExecutionSource, stateTransitions } from '../../local/records/history.ts';
import type { StepStats, WorkflowStats } from '../../local/records/step-stats.ts';
import type { TokenUsage } from '../../runtime/contracts/step.ts';
import { sumUsage } from '../../runtime/steps/types.ts';
import { startedBy } from './construct-views.ts';
import { type CostView, costOf, type StepView, stepViews } from './step-views.ts';

// The UI reads a step's type beside the execution's.
export type { StepView } from './step-views.ts';

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
  /** A Map's item chain, or each branch of a Parallel, drawn inside the node. */
  children?: SubGraph[];
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

/** A Map's item chain or one branch of a Parallel, laid out inside its node: at `x`, `y` from the node's corner. */
export interface SubGraph {
  label: string;
  x: number;
  y: number;
  width: number;
  height: number;
  nodes: GraphNode[];
  edges: GraphEdge[];
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
  Branches?: { StartAt: string; States: Record<string, AslState> }[];
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
  const figured = (n: GraphNode): GraphNode => ({
    ...n,
    ...((n.kind === 'llm' || n.kind === 'code') && figures.has(n.id) && { stats: stepFigures(figures.get(n.id)!) }),
    ...(n.children && { children: n.children.map((c) => ({ ...c, nodes: c.nodes.map(figured) })) }),
  });
  return { ...layout, nodes: layout.nodes.map(figured) };
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
  const notes = [
    `Every step's route Choice sends a route past maxSteps (${def.manifest.maxSteps}) to ${MAX_STEPS_HANDOFF} → ${def.manifest.fallback}.`,
    `Every step catches its errors (after its retries) to the fallback ${def.manifest.fallback}.`,
  ];
  return { ...layoutStates(definition.States as Record<string, AslState>, def, steps), notes };
}

type Placed = Pick<SubGraph, 'width' | 'height' | 'nodes' | 'edges'>;

/** The states of one level (the top, an item chain, a branch) laid out top to bottom with dagre. */
function layoutStates(
  states: Record<string, AslState>,
  def: WorkflowDefinition,
  steps: ReadonlyMap<string, StepDefinition>,
): Placed {
  const names = new Set(steps.keys());
  const g = new Graph({ multigraph: true });
  g.setGraph({ rankdir: 'TB', nodesep: 28, ranksep: 44, marginx: 16, marginy: 16 });
  g.setDefaultEdgeLabel(() => ({}));
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
  return { width, height, nodes: placed, edges: laidEdges };
}

/** Room inside a Map or Parallel node: around its sub-graphs, for its name, and for each sub-graph's label. */
const PAD = 12;
const HEADER = 30;
const SUB_LABEL = 18;

/** A Map's item chain or a Parallel's branches, laid out and placed side by side under the node's name. */
function subGraphs(
  state: AslState,
  def: WorkflowDefinition,
  steps: ReadonlyMap<string, StepDefinition>,
  owner: string | undefined,
): SubGraph[] | undefined {
  const levels =
    state.Type === 'Map'
      ? [{ label: 'each item', states: (state.ItemProcessor ?? state.Iterator)?.States ?? {} }]
      : state.Type === 'Parallel'
        ? (state.Branches ?? []).map((b) => ({
            label: `branch ${owner && b.StartAt.startsWith(`${owner}.`) ? b.StartAt.slice(owner.length + 1) : b.StartAt}`,
            states: b.States,
          }))
        : [];
  if (!levels.length) return undefined;
  let x = PAD;
  return levels.map(({ label, states }) => {
    const placed = layoutStates(states, def, steps);
    const sub = { label, x, y: HEADER + SUB_LABEL, ...placed };
    x += Math.max(placed.width, label.length * 7) + PAD;
    return sub;
  });
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
  const owner = ownerStep(id, names);
  const children = subGraphs(state, def, steps, owner);
  // Wide enough for the whole name at 12 px (about 7 px a character), and for what it holds.
  const width = Math.max(
    step ? 190 : kind === 'choice' ? 150 : 160,
    Math.ceil(id.length * 7.2) + 24,
    ...(children ?? []).map((c) => c.x + Math.max(c.width, c.label.length * 7) + PAD),
  );
  // Steps keep room for their figures whether there are any yet: the layout does not depend on them.
  const height = children ? HEADER + SUB_LABEL + Math.max(...children.map((c) => c.height)) + PAD : step ? 62 : 34;
  return {
    id,
    kind,
    label: id,
    ...(owner && { step: owner }),
    ...(state.Comment && { comment: state.Comment }),
    ...(id === def.manifest.entry && { role: 'entry' as const }),
    ...(id === def.manifest.fallback && { role: 'fallback' as const }),
    ...(children && { children }),
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

/** Every state of a definition, inside Map item chains and Parallel branches too. */
function stateNames(states: Record<string, AslState>): string[] {
  return Object.entries(states).flatMap(([name, s]) => [
    name,
    ...[s.ItemProcessor ?? s.Iterator, ...(s.Branches ?? [])].flatMap((inner) =>
      inner ? stateNames(inner.States) : [],
    ),
  ]);
}

/**
 * The states an execution entered (inside items and branches too), how often, and each transition
 * taken: a state entered right after another was exited, by the entry's `previousEventId` (items
 * and branches run at once, so their events interleave), else the state entered before it.
 */
export function executionPath(
  events: readonly HistoryEvent[],
  definition: Pick<StateMachineDefinition, 'States'>,
): ExecutionPath {
  const known = new Set(stateNames(definition.States as Record<string, AslState>));
  const byId = new Map(events.map((e) => [e.id, e]));
  const states: Record<string, number> = {};
  const edges: [string, string][] = [];
  let previous: string | undefined;
  for (const e of events) {
    const name = e.type?.endsWith('StateEntered') ? e.stateEnteredEventDetails?.name : undefined;
    if (!name || !known.has(name)) continue;
    states[name] = (states[name] ?? 0) + 1;
    const before = byId.get(e.previousEventId);
    const from = before ? before.type?.endsWith('StateExited') && before.stateExitedEventDetails?.name : previous;
    if (from && known.has(from) && !edges.some(([a, b]) => a === from && b === name)) edges.push([from, name]);
    previous = name;
  }
  return { states, edges };
}

export interface ExecutionView {
  record: Omit<ExecutionRecord, 'events' | 'startDate' | 'stopDate'> & {
    startDate: string;
    stopDate?: string;
    source: ExecutionSource;
    outcome?: string;
    about: Record<string, string>;
  };
  /** The execution whose workflow step started this one. */
  startedBy?: string;
  steps: StepView[];
  path: ExecutionPath;
  usage: TokenUsage;
  cost?: CostView;
  stateTransitions: number;
  /** How many history events it has (the events are fetched when shown: they repeat every input and output). */
  eventCount: number;
}

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
  const views = stepViews(record, def, definition, modelId, prices);
  const parent = startedBy(record.input);
  const usage = sumUsage(views.map((v) => v.usage));
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
    ...(parent && { startedBy: parent }),
    steps: views,
    path: definition ? executionPath(events, definition) : { states: {}, edges: [] },
    usage,
    ...(cost && { cost }),
    stateTransitions: stateTransitions(events),
    eventCount: events.length,
  };
}
