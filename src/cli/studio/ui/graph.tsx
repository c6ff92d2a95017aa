/**
 * The workflow graph as SVG: nodes placed by the server (dagre), the execution's path highlighted, steps selectable by
 * keyboard.
 */

import type { GraphEdge, GraphNode, SubGraph, WorkflowGraph } from '../views.ts';
import { kindName } from './common.tsx';
import { ALL_RUNS_NOTE, nodeFiguresText } from './figures.ts';

/** An execution's path through the graph. */
type Path = { states: Record<string, number>; edges: [string, string][] };

export interface GraphProps {
  graph: WorkflowGraph;
  /** Entered states (how often), and the transitions taken. */
  path?: Path;
  /** Called when a node is chosen (click, Enter or Space): steps and their generated states. */
  onSelect?: (node: GraphNode) => void;
  selected?: string;
  label: string;
}

const line = (points: { x: number; y: number }[]) =>
  points.map((p, i) => `${i ? 'L' : 'M'}${p.x.toFixed(1)},${p.y.toFixed(1)}`).join(' ');

export function Graph({ graph, path, onSelect, selected, label }: GraphProps) {
  const taken = new Set(path?.edges.map(([a, b]) => `${a}|${b}`));
  return (
    <figure class="graph" tabIndex={0} aria-label={`${label} (scrolls)`}>
      <svg
        viewBox={`0 0 ${Math.ceil(graph.width)} ${Math.ceil(graph.height)}`}
        width={Math.ceil(graph.width)}
        role="group"
        aria-label={label}
      >
        <Arrowheads />
        <Layer graph={graph} taken={taken} path={path} onSelect={onSelect} selected={selected} />
      </svg>
      <Legend path={path} notes={graph.notes} />
    </figure>
  );
}

interface LayerProps {
  graph: Pick<SubGraph, 'nodes' | 'edges'>;
  /** The transitions taken, as `from|to`. */
  taken: ReadonlySet<string>;
  path?: Path;
  onSelect?: (node: GraphNode) => void;
  selected?: string;
}

/** The states of one level and the transitions between them: the top, or inside a Map or Parallel. */
function Layer({ graph, taken, ...rest }: LayerProps) {
  return (
    <>
      {graph.edges.map((e) => (
        <Edge key={`${e.from}|${e.to}|${e.kind}`} edge={e} taken={taken.has(`${e.from}|${e.to}`)} />
      ))}
      {graph.nodes.map((n) =>
        n.children ? (
          <ContainerNode key={n.id} node={n} taken={taken} {...rest} />
        ) : (
          <StateNode key={n.id} node={n} path={rest.path} onSelect={rest.onSelect} selected={rest.selected === n.id} />
        ),
      )}
    </>
  );
}

/** The arrowheads the edges end with: grey, and blue on the path taken. */
function Arrowheads() {
  return (
    <defs>
      <Arrowhead id="arrow" fill="#5b6270" />
      <Arrowhead id="arrow-taken" fill="#0b5cad" />
    </defs>
  );
}

function Arrowhead({ id, fill }: { id: string; fill: string }) {
  return (
    <marker id={id} viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">
      <path d="M0,0 L10,5 L0,10 z" fill={fill} />
    </marker>
  );
}

function Edge({ edge: e, taken }: { edge: GraphEdge; taken: boolean }) {
  const middle = e.points[Math.floor(e.points.length / 2)];
  return (
    <g class={`edge edge-${e.kind}${taken ? ' taken' : ''}`}>
      <path d={line(e.points)} marker-end={taken ? 'url(#arrow-taken)' : 'url(#arrow)'} />
      {e.label && e.points.length > 1 && (
        <text x={middle!.x + 4} y={middle!.y - 3}>
          {e.label}
        </text>
      )}
    </g>
  );
}

/** The accessible name starts with every text the node shows, then says what it is. */
function describeNode(n: GraphNode, shownTexts: (string | undefined)[], visits: number | undefined, path?: Path) {
  const entered = visits ? `entered ${visits}×` : path ? 'not entered' : undefined;
  return [shownTexts.filter(Boolean).join(' '), kindName(n.kind), n.role, entered, n.comment]
    .filter(Boolean)
    .join(', ');
}

/** What makes a node a button: its name, and choosing it by click, Enter or Space. */
function selectable(describe: string, choose: () => void) {
  return {
    role: 'button' as const,
    // Lower case: SVG attributes are case-sensitive.
    tabindex: 0,
    'aria-label': describe,
    onClick: choose,
    onKeyDown: (e: KeyboardEvent) => {
      if (e.key === 'Enter' || e.key === ' ') {
        e.preventDefault();
        choose();
      }
    },
  };
}

const stateClass = (n: GraphNode, visited: boolean, selected: boolean) =>
  `node node-${n.kind}${visited ? ' visited' : ''}${selected ? ' selected' : ''}${n.role ? ` node-${n.role}` : ''}`;

const cornerRadius = (kind: GraphNode['kind']) =>
  kind === 'choice' ? 16 : kind === 'succeed' || kind === 'fail' ? 17 : 6;

interface StateNodeProps {
  node: GraphNode;
  path?: Path;
  onSelect?: (node: GraphNode) => void;
  selected: boolean;
}

function StateNode({ node: n, path, onSelect, selected }: StateNodeProps) {
  const visits = path?.states[n.id];
  const interactive = Boolean(onSelect);
  const figures = n.stats && nodeFiguresText(n.stats, Boolean(path));
  const shown = visits && visits > 1 ? `×${visits}` : undefined;
  const describe = describeNode(n, [n.label, figures, shown], visits, path);
  return (
    <g
      class={stateClass(n, Boolean(visits), selected)}
      transform={`translate(${n.x.toFixed(1)},${n.y.toFixed(1)})`}
      data-state={n.id}
      {...(interactive && selectable(describe, () => onSelect?.(n)))}
    >
      {/* A tooltip for the pointer; a selectable node has the same words as its name already. */}
      {!interactive && <title>{describe}</title>}
      <rect width={n.width} height={n.height} rx={cornerRadius(n.kind)} />
      <StateLabel node={n} figures={figures} shown={shown} />
    </g>
  );
}

/**
 * A Map with its item chain, or a Parallel with its branches: a frame whose name selects it (a button holding no
 * other), with each sub-graph labelled inside it.
 */
function ContainerNode({ node: n, taken, ...rest }: Omit<LayerProps, 'graph'> & { node: GraphNode }) {
  const visits = rest.path?.states[n.id];
  const interactive = Boolean(rest.onSelect);
  const shown = visits && visits > 1 ? `×${visits}` : undefined;
  const describe = describeNode(n, [n.label, shown], visits, rest.path);
  return (
    <g
      class={stateClass(n, Boolean(visits), rest.selected === n.id)}
      transform={`translate(${n.x.toFixed(1)},${n.y.toFixed(1)})`}
      data-state={n.id}
    >
      <rect width={n.width} height={n.height} rx={8} />
      <g class="container-head" {...(interactive && selectable(describe, () => rest.onSelect?.(n)))}>
        {!interactive && <title>{describe}</title>}
        <rect width={n.width} height={26} rx={8} />
        <text class="label" x={10} y={18}>
          {n.label}
          {shown && ` ${shown}`}
        </text>
      </g>
      {n.children!.map((c) => (
        <g class="lane" key={c.label} transform={`translate(${c.x},${c.y})`} data-lane={c.label}>
          <text x={2} y={-5}>
            {c.label}
          </text>
          <rect width={c.width} height={c.height} rx={6} />
          <Layer graph={c} taken={taken} {...rest} />
        </g>
      ))}
    </g>
  );
}

/** One text element, words apart, so the visible text reads as the accessible name starts. */
function StateLabel({ node: n, figures, shown }: { node: GraphNode; figures?: string; shown?: string }) {
  return (
    <text text-anchor="middle" class="label">
      <tspan x={n.width / 2} y={n.stats ? 20 : n.height / 2 + 4}>
        {n.label}
      </tspan>
      {figures && ' '}
      {figures && (
        <tspan x={n.width / 2} y={40} class="figures">
          {figures}
        </tspan>
      )}
      {shown && ' '}
      {shown && (
        <tspan x={n.width - 6} y={12} text-anchor="end" class="visits">
          {shown}
        </tspan>
      )}
    </text>
  );
}

function Legend({ path, notes }: { path?: Path; notes: string[] }) {
  return (
    <figcaption>
      <span class="legend legend-llm">LLM step</span> <span class="legend legend-code">code step</span>{' '}
      <span class="legend legend-choice">Choice (routing)</span> <span class="legend legend-pause">checkpoint</span>{' '}
      <span class="legend legend-map">Map or Parallel, with what runs inside</span>{' '}
      {path && <span class="legend legend-taken">path taken</span>}
      {path && <span class="note"> {ALL_RUNS_NOTE}</span>}
      {notes.map((note) => (
        <span class="note" key={note}>
          {' '}
          {note}
        </span>
      ))}
    </figcaption>
  );
}
