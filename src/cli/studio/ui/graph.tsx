/** The workflow graph as SVG: nodes placed by the server (dagre), the execution's path highlighted, steps selectable by keyboard. */
import type { GraphNode, WorkflowGraph } from '../views.ts';

export interface GraphProps {
  graph: WorkflowGraph;
  /** Entered states (how often), and the transitions taken. */
  path?: { states: Record<string, number>; edges: [string, string][] };
  /** Called when a node is chosen (click, Enter or Space): steps and their generated states. */
  onSelect?: (node: GraphNode) => void;
  selected?: string;
  label: string;
}

const line = (points: { x: number; y: number }[]) => points.map((p, i) => `${i ? 'L' : 'M'}${p.x.toFixed(1)},${p.y.toFixed(1)}`).join(' ');

export function Graph({ graph, path, onSelect, selected, label }: GraphProps) {
  const taken = new Set(path?.edges.map(([a, b]) => `${a}|${b}`));
  return (
    <figure class="graph" tabIndex={0} aria-label={`${label} (scrolls)`}>
      <svg viewBox={`0 0 ${Math.ceil(graph.width)} ${Math.ceil(graph.height)}`} width={Math.ceil(graph.width)} role="group" aria-label={label}>
        <defs>
          <marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">
            <path d="M0,0 L10,5 L0,10 z" fill="#5b6270" />
          </marker>
          <marker id="arrow-taken" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">
            <path d="M0,0 L10,5 L0,10 z" fill="#0b5cad" />
          </marker>
        </defs>
        {graph.edges.map((e) => {
          const on = taken.has(`${e.from}|${e.to}`);
          return (
            <g class={`edge edge-${e.kind}${on ? ' taken' : ''}`} key={`${e.from}|${e.to}|${e.kind}`}>
              <path d={line(e.points)} marker-end={on ? 'url(#arrow-taken)' : 'url(#arrow)'} />
              {e.label && e.points.length > 1 && (
                <text x={e.points[Math.floor(e.points.length / 2)]!.x + 4} y={e.points[Math.floor(e.points.length / 2)]!.y - 3}>
                  {e.label}
                </text>
              )}
            </g>
          );
        })}
        {graph.nodes.map((n) => {
          const visits = path?.states[n.id];
          const interactive = Boolean(onSelect);
          const figures = n.stats && `${n.stats.runs} runs · ${Math.round(n.stats.meanDurationMs)} ms · ${n.stats.inputTokens + n.stats.outputTokens} tok`;
          const shown = visits && visits > 1 ? `×${visits}` : undefined;
          // The accessible name starts with every text the node shows, then says what it is.
          const describe = [[n.label, figures, shown].filter(Boolean).join(' '), n.kind === 'llm' ? 'LLM step' : n.kind === 'code' ? 'code step' : n.kind, n.role, visits ? `entered ${visits}×` : path ? 'not entered' : undefined, n.comment]
            .filter(Boolean)
            .join(', ');
          const choose = () => onSelect?.(n);
          return (
            <g
              key={n.id}
              class={`node node-${n.kind}${visits ? ' visited' : ''}${selected === n.id ? ' selected' : ''}${n.role ? ` node-${n.role}` : ''}`}
              transform={`translate(${n.x.toFixed(1)},${n.y.toFixed(1)})`}
              data-state={n.id}
              {...(interactive && {
                role: 'button',
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
              })}
            >
              {/* A tooltip for the pointer; a selectable node has the same words as its name already. */}
              {!interactive && <title>{describe}</title>}
              <rect width={n.width} height={n.height} rx={n.kind === 'choice' ? 16 : n.kind === 'succeed' || n.kind === 'fail' ? 17 : 6} />
              {/* One text element, words apart, so the visible text reads as the accessible name starts. */}
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
            </g>
          );
        })}
      </svg>
      <figcaption>
        <span class="legend legend-llm">LLM step</span> <span class="legend legend-code">code step</span> <span class="legend legend-choice">Choice (routing)</span>{' '}
        <span class="legend legend-pause">checkpoint</span> {path && <span class="legend legend-taken">path taken</span>}
        {graph.notes.map((note) => (
          <span class="note" key={note}>
            {' '}
            {note}
          </span>
        ))}
      </figcaption>
    </figure>
  );
}
