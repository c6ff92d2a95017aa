import { useState } from 'preact/hooks';
import type { WorkflowStats } from '../../../../local/records/step-stats.ts';
import type { WorkflowGraph } from '../../views.ts';
import { Head, Loading, ms, Problem } from '../common.tsx';
import { Graph } from '../graph.tsx';
import { useData, useLive, useStart } from '../hooks.ts';
import { RunOwn } from './run-own.tsx';

export interface Overview {
  project: string;
  aws: boolean;
  workflows: { name: string; description: string; version: string; steps: number; samples: string[] }[];
}

export function Workflows() {
  const { data, error } = useData<Overview>('overview');
  return (
    <>
      <h1>Workflows</h1>
      <Problem message={error} />
      {!data && !error && <Loading what="workflows" />}
      {data && (
        <ul class="cards">
          {data.workflows.map((w) => (
            <li key={w.name}>
              <h2>
                <a href={`#/workflows/${encodeURIComponent(w.name)}`}>{w.name}</a>
              </h2>
              <p>{w.description}</p>
              <p class="muted">
                v{w.version} · {w.steps} steps · {w.samples.length} samples
              </p>
            </li>
          ))}
        </ul>
      )}
    </>
  );
}

interface WorkflowDetail {
  name: string;
  description: string;
  version: string;
  entry: string;
  fallback: string;
  maxSteps: number;
  model: string;
  stateMachine: string;
  steps: {
    name: string;
    kind: string;
    description: string;
    version: string;
    next: string[];
    tools: string[];
    consensus?: { samples: number };
    pause?: { timeoutSeconds: number; onTimeout: string };
  }[];
  samples: string[];
  stats: WorkflowStats;
  graph: WorkflowGraph;
}

export function Workflow({ name }: { name: string }) {
  const { data, error, reload } = useData<WorkflowDetail>(`workflows/${encodeURIComponent(name)}`);
  useLive(['executions'], reload);
  const { busy, problem: runError, start } = useStart();
  const [running, setRunning] = useState<string>();
  const run = (sample: string) => {
    setRunning(sample);
    void start('runs', { workflow: name, sample });
  };
  return (
    <>
      <h1>{name}</h1>
      <Problem message={error} />
      {!data && !error && <Loading what={name} />}
      {data && (
        <>
          <p>{data.description}</p>
          <p class="muted">
            v{data.version} · entry {data.entry} · fallback {data.fallback} · maxSteps {data.maxSteps} · model{' '}
            {data.model} · state machine {data.stateMachine}
          </p>
          <section aria-labelledby="samples-h">
            <h2 id="samples-h">Run a sample</h2>
            <Problem message={runError} />
            <ul class="buttons">
              {data.samples.map((s) => (
                <li key={s}>
                  <button type="button" onClick={() => run(s)} disabled={busy}>
                    {busy && running === s ? `Running sample ${s}…` : `Run sample ${s}`}
                  </button>
                </li>
              ))}
            </ul>
            <RunOwn workflow={name} />
          </section>
          <section aria-labelledby="graph-h">
            <h2 id="graph-h">Graph</h2>
            <Graph graph={data.graph} label={`${name}: the compiled state machine`} />
          </section>
          <StepsAndStatistics name={name} detail={data} />
        </>
      )}
    </>
  );
}

/** Each step with where it routes and its figures over the local executions, as `stepwise stats` shows them. */
function StepsAndStatistics({ name, detail }: { name: string; detail: WorkflowDetail }) {
  return (
    <section aria-labelledby="stats-h">
      <h2 id="stats-h">Steps and statistics</h2>
      <p class="muted">
        Over {detail.stats.executions} local executions (
        {Object.entries(detail.stats.byStatus)
          .map(([s, n]) => `${n} ${s}`)
          .join(', ') || 'none yet'}
        ), as <code>stepwise stats {name}</code> shows them.
      </p>
      <table>
        <caption class="visually-hidden">Steps of {name}</caption>
        <Head
          columns={[
            'Step',
            'Kind',
            'Routes to',
            'Runs',
            'Failed',
            'Retries',
            'Hand-offs',
            'Mean',
            'Model calls',
            'Tokens in/out',
          ]}
        />
        <tbody>
          {detail.steps.map((s) => {
            const st = detail.stats.steps.find((x) => x.step === s.name);
            return (
              <tr key={s.name}>
                <th scope="row" title={s.description}>
                  {s.name}
                </th>
                <td>
                  {s.kind}
                  {s.consensus ? `, consensus ×${s.consensus.samples}` : ''}
                  {s.pause ? ', pauses' : ''}
                </td>
                <td>{s.next.join(', ')}</td>
                <td>{st?.runs ?? 0}</td>
                <td>{st?.failures ?? 0}</td>
                <td>{st?.retries ?? 0}</td>
                <td>{st?.handoffs ?? 0}</td>
                <td>{st ? ms(st.meanDurationMs) : ''}</td>
                <td>{st?.modelCalls ?? 0}</td>
                <td>{st ? `${st.inputTokens}/${st.outputTokens}` : ''}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </section>
  );
}
