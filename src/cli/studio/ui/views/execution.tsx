import type { PauseSummary } from '../../../../local/sessions/workflow-session.ts';
import type { ExecutionView, StepView, WorkflowGraph } from '../../views.ts';
import { Loading, ms, Problem, Status, usd, when } from '../common.tsx';
import { runSeconds, stepsText } from '../figures.ts';
import { Graph } from '../graph.tsx';
import { useData, useLive } from '../hooks.ts';
import { constructSummary, executionLink } from './construct.tsx';
import { Events } from './events.tsx';
import { StepPanel } from './step-panel.tsx';

type Detail = ExecutionView & { pause?: PauseSummary; forks: { name: string; step: string; status: string }[] };

export function Execution({ name, query }: { name: string; query: URLSearchParams }) {
  const source = query.get('source');
  const { data, error, reload } = useData<Detail>(
    `executions/${encodeURIComponent(name)}${source ? `?source=${encodeURIComponent(source)}` : ''}`,
  );
  useLive(['executions', 'imports', 'pauses'], reload, [name]);
  const graph = useData<{ graph: WorkflowGraph }>(
    data?.record.workflow ? `workflows/${encodeURIComponent(data.record.workflow)}` : null,
  );
  const selected = Number(query.get('step') ?? 0);
  const select = (index: number) => {
    location.hash = `${executionLink(name)}?step=${index}`;
  };
  if (!data)
    return (
      <>
        <h1>{name}</h1>
        {error ? <Problem message={error} /> : <Loading what={name} />}
        {error && /not started yet/.test(error) && (
          <p class="muted">Waiting for it to start; this page updates by itself.</p>
        )}
      </>
    );
  const { record } = data;
  const step = data.steps[selected] ?? data.steps[0];
  return (
    <>
      <h1>
        {name} <Status status={data.pause ? 'PAUSED' : record.status} />
      </h1>
      <Facts data={data} />
      <p class="muted">{record.executionArn}</p>
      <Lineage name={name} data={data} />
      {data.pause && <PauseCallout state={data.pause.state} />}
      {record.error && (
        <Problem
          message={`${record.error.Error}${record.error.Cause ? `: ${record.error.Cause.split('\n')[0]}` : ''}`}
        />
      )}
      <div class="split">
        <PathPane name={name} data={data} graph={graph.data?.graph} step={step} onSelect={select} />
        <section aria-labelledby="steps-h" class="pane">
          <h2 id="steps-h">Steps</h2>
          <StepList steps={data.steps} selected={step?.index} onSelect={select} />
          {step && (
            <StepPanel execution={name} step={step} steps={data.steps} forkable={record.workflow !== undefined} />
          )}
        </section>
      </div>
      <Events
        execution={name}
        title={`Raw ASL events (${data.eventCount})`}
        label="Every history event of the execution"
        class="raw"
      />
    </>
  );
}

/** Where the execution waits: at a pause for a person's answer, or for an outside event. */
function PauseCallout({ state }: { state: string }) {
  return state.endsWith('.wait-event') ? (
    <p class="callout">Waiting at {state} for an outside event: see the step for what it awaits.</p>
  ) : (
    <p class="callout">
      Paused at {state}: <a href="#/pauses">approve or reject it under Pauses</a>.
    </p>
  );
}

/** The path the execution took on its workflow's graph, and its steps on a timeline; either selects a step. */
function PathPane({
  name,
  data,
  graph,
  step,
  onSelect,
}: {
  name: string;
  data: Detail;
  /** Absent while it loads. */
  graph?: WorkflowGraph;
  step?: StepView;
  onSelect: (index: number) => void;
}) {
  return (
    <section aria-labelledby="path-h" class="pane">
      <h2 id="path-h">Path</h2>
      {graph ? (
        <Graph
          graph={graph}
          path={data.path}
          selected={step?.name}
          label={`${data.record.workflow}: the path of ${name}`}
          onSelect={(node) => {
            const at = data.steps.findIndex((s) => s.name === node.id || s.name === node.step);
            if (at >= 0) onSelect(at);
          }}
        />
      ) : (
        <Loading what="the graph" />
      )}
      <Timeline steps={data.steps} start={data.record.startDate} selected={step?.index} onSelect={onSelect} />
    </section>
  );
}

/** The execution in one line: workflow, origin, start, duration, steps, tokens and cost, outcome. */
function Facts({ data }: { data: Detail }) {
  const { record, usage, cost } = data;
  const seconds = runSeconds(record, data.steps);
  const origin =
    record.source === 'imported' ? `imported from ${record.imported?.from === 'aws' ? 'AWS' : 'a file'}` : 'local';
  return (
    <p class="facts">
      {record.workflow && (
        <>
          workflow <a href={`#/workflows/${encodeURIComponent(record.workflow)}`}>{record.workflow}</a> ·{' '}
        </>
      )}
      {origin} · started {when(record.startDate)}
      {seconds !== undefined && ` · ${seconds.toFixed(2)} s${record.parent ? ' since the fork' : ''}`} ·{' '}
      {stepsText(data.steps)} · {data.stateTransitions} state transitions · tokens {usage.inputTokens} in /{' '}
      {usage.outputTokens} out ({usage.modelCalls} model calls)
      {cost && ` · ${usd(cost.usd)} at ${cost.modelId} list prices`}
      {record.outcome && ` · outcome ${record.outcome}`}
    </p>
  );
}

const diffLink = (a: string, b: string) => `#/diff/${encodeURIComponent(a)}/${encodeURIComponent(b)}`;

/** The execution this one was forked from, the forks made from it, and the execution whose workflow step started it. */
function Lineage({ name, data }: { name: string; data: Detail }) {
  const { parent } = data.record;
  return (
    <>
      {data.startedBy && (
        <p data-testid="started-by">
          Child execution, started by a workflow step of <a href={executionLink(data.startedBy)}>{data.startedBy}</a>
        </p>
      )}
      {parent && (
        <p>
          Fork of <a href={executionLink(parent.execution)}>{parent.execution}</a> from step {parent.step}:{' '}
          <a href={diffLink(parent.execution, name)}>compare with its parent</a>
        </p>
      )}
      {data.forks.length > 0 && (
        <p>
          Forks:{' '}
          {data.forks.map((f, i) => (
            <span key={f.name}>
              {i > 0 && ', '}
              <a href={executionLink(f.name)}>{f.name}</a> (from {f.step}, {f.status.toLowerCase()}) ·{' '}
              <a href={diffLink(name, f.name)}>diff</a>
            </span>
          ))}
        </p>
      )}
    </>
  );
}

interface StepChoiceProps {
  steps: StepView[];
  selected?: number;
  onSelect: (index: number) => void;
}

function StepList({ steps, selected, onSelect }: StepChoiceProps) {
  return (
    <ol class="steps">
      {steps.map((s) => (
        <li key={s.index}>
          <button
            type="button"
            aria-pressed={s.index === selected}
            onClick={() => onSelect(s.index)}
            class={s.error ? 'failed' : ''}
          >
            <span class="step-name">{s.name}</span>
            <span class="muted">
              {s.decision ? ` → ${s.decision.next}` : s.error ? ` ✗ ${s.error.error}` : ''}
              {s.retries ? ` ↻${s.retries}` : ''}
              {s.construct && ` · ${constructSummary(s.construct)}`}
              {s.within && ` · ${withinText(s.within)}`}
            </span>
          </button>
        </li>
      ))}
    </ol>
  );
}

/** Where an inner step ran: `item 2 of 01-classify-all`, `branch order of 01-look-up`. */
const withinText = (w: NonNullable<StepView['within']>) =>
  `${w.item !== undefined ? `item ${w.item}` : w.branch !== undefined ? `branch ${w.branch}` : 'inside'} of ${w.step}`;

function Timeline({ steps, start, selected, onSelect }: StepChoiceProps & { start: string }) {
  const t0 = Date.parse(start);
  const end = Math.max(t0 + 1, ...steps.map((s) => Date.parse(s.exitedAt ?? s.enteredAt)));
  const span = end - t0;
  return (
    <div class="timeline" role="group" aria-label="Timeline of the steps">
      {steps.map((s) => {
        const left = ((Date.parse(s.enteredAt) - t0) / span) * 100;
        const width = Math.max(
          0.8,
          (((s.exitedAt ? Date.parse(s.exitedAt) : end) - Date.parse(s.enteredAt)) / span) * 100,
        );
        return (
          <button
            type="button"
            key={s.index}
            class={`bar bar-${s.kind}${s.index === selected ? ' selected' : ''}${s.error ? ' failed' : ''}`}
            style={{ marginLeft: `${left}%`, width: `${width}%` }}
            onClick={() => onSelect(s.index)}
            aria-label={`${s.name}: ${ms(s.latencyMs)} from ${ms(Date.parse(s.enteredAt) - t0)}`}
            title={`${s.name}: ${ms(s.latencyMs)}`}
          >
            <span>{s.name}</span>
          </button>
        );
      })}
    </div>
  );
}
