import { useState } from 'preact/hooks';
import type { EvalRun, EvalRunDiff } from '../../../../evals/eval-runs.ts';
import { Head, Loading, Problem, when } from '../common.tsx';
import { useData, useLive } from '../hooks.ts';

type RunSummary = Pick<EvalRun, 'id' | 'at' | 'model' | 'passed' | 'failed' | 'total'>;

/** The latest `stepwise eval` runs of each workflow; pick two to compare. */
export function Evals() {
  const { data, error, reload } = useData<{ workflow: string; runs: RunSummary[] }[]>('evals');
  useLive(['evals'], reload);
  return (
    <>
      <h1>Evals</h1>
      <p class="muted">
        Every <code>stepwise eval &lt;workflow&gt;</code> run is kept; the latest ten of each workflow are here.
      </p>
      <Problem message={error} />
      {!data && !error && <Loading what="eval runs" />}
      {data?.map((w) => (
        <WorkflowRuns key={w.workflow} workflow={w.workflow} runs={w.runs} />
      ))}
    </>
  );
}

function WorkflowRuns({ workflow, runs }: { workflow: string; runs: RunSummary[] }) {
  const [a, setA] = useState(runs[1]?.id ?? '');
  const [b, setB] = useState(runs[0]?.id ?? '');
  return (
    <section aria-labelledby={`evals-${workflow}`}>
      <h2 id={`evals-${workflow}`}>{workflow}</h2>
      {runs.length === 0 ? (
        <p class="muted">No runs yet.</p>
      ) : (
        <>
          <ul>
            {runs.map((r) => (
              <li key={r.id}>
                <a href={`#/evals/${encodeURIComponent(workflow)}/${encodeURIComponent(r.id)}`}>{when(r.at)}</a> ·{' '}
                {r.passed}/{r.total} passed · {r.model}
              </li>
            ))}
          </ul>
          {runs.length > 1 && (
            <form
              class="row"
              onSubmit={(e) => {
                e.preventDefault();
                location.hash = `#/evals/${encodeURIComponent(workflow)}/diff/${encodeURIComponent(a)}/${encodeURIComponent(b)}`;
              }}
            >
              {(
                [
                  ['Earlier run', a, setA],
                  ['Later run', b, setB],
                ] as const
              ).map(([label, value, set]) => (
                <label key={label}>
                  {label}
                  <select value={value} onChange={(e) => set((e.target as HTMLSelectElement).value)}>
                    {runs.map((r) => (
                      <option key={r.id} value={r.id}>
                        {when(r.at)} ({r.passed}/{r.total})
                      </option>
                    ))}
                  </select>
                </label>
              ))}
              <button type="submit">Compare the two runs of {workflow}</button>
            </form>
          )}
        </>
      )}
    </section>
  );
}

/** One run: each case's expected and actual trail; a failed case links to the execution it was judged on. */
export function EvalRunView({ workflow, id }: { workflow: string; id: string }) {
  const { data, error } = useData<EvalRun>(`evals/${encodeURIComponent(workflow)}/${encodeURIComponent(id)}`);
  return (
    <>
      <h1>
        Eval run of {workflow}, {when(data?.at)}
      </h1>
      <Problem message={error} />
      {!data && !error && <Loading what="the run" />}
      {data && (
        <>
          <p>
            {data.passed} passed, {data.failed} failed, {data.total} total · model {data.model}
          </p>
          <table>
            <caption class="visually-hidden">Cases</caption>
            <Head columns={['Case', 'Verdict', 'Expected trail', 'Actual trail', 'Why it failed']} />
            <tbody>
              {data.cases.map((c) => (
                <tr key={c.id} class={c.passed ? '' : 'differs'}>
                  <th scope="row">{c.id}</th>
                  <td>{c.passed ? '✓ passed' : '✗ failed'}</td>
                  <td>{(data.expected[c.id] ?? ['(not checked)']).join(' → ')}</td>
                  <td>{c.steps.map((s) => `${s.name}${s.next ? ` → ${s.next}` : ''}`).join(', ')}</td>
                  <td>
                    {c.failures.map((f, i) => (
                      <div key={i}>
                        {f.why}
                        <div class="muted">
                          expected {f.expected}; actual {f.actual}
                        </div>
                      </div>
                    ))}
                    {!c.passed && c.execution && (
                      <a href={`#/executions/${encodeURIComponent(c.execution)}`}>What ran: {c.execution}</a>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
    </>
  );
}

export function EvalDiff({ workflow, a, b }: { workflow: string; a: string; b: string }) {
  const { data, error } = useData<EvalRunDiff>(
    `evals/${encodeURIComponent(workflow)}/diff?a=${encodeURIComponent(a)}&b=${encodeURIComponent(b)}`,
  );
  return (
    <>
      <h1>Two eval runs of {workflow}</h1>
      <Problem message={error} />
      {!data && !error && <Loading what="the comparison" />}
      {data && (
        <>
          <p>
            Pass rate {(data.passRate.a * 100).toFixed(0)}% → {(data.passRate.b * 100).toFixed(0)}% · model calls per
            case {data.modelCalls.a.toFixed(2)} → {data.modelCalls.b.toFixed(2)}
          </p>
          <h2>Verdicts that changed</h2>
          {data.changed.length === 0 ? (
            <p>None.</p>
          ) : (
            <ul>
              {data.changed.map((c) => (
                <li key={c.id}>
                  {c.id}: {String(c.a)} → {String(c.b)}
                </li>
              ))}
            </ul>
          )}
          <h2>Cases that took another route</h2>
          {data.routeDifferences.length === 0 ? (
            <p>None.</p>
          ) : (
            <table>
              <caption class="visually-hidden">Route differences</caption>
              <Head columns={['Case', 'Earlier', 'Later']} />
              <tbody>
                {data.routeDifferences.map((d) => (
                  <tr key={d.id}>
                    <th scope="row">{d.id}</th>
                    <td>{d.a}</td>
                    <td>{d.b}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </>
      )}
    </>
  );
}
