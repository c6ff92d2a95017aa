import type { DeployedExecution } from '../../../../local/import.ts';
import type { ExecutionSummary } from '../../views.ts';
import { Head, Loading, Problem, Status, when } from '../common.tsx';
import { useData, useLive, useStart } from '../hooks.ts';

interface ExecutionList {
  executions: ExecutionSummary[];
  unreadable: number;
  workflows: string[];
  statuses: string[];
  outcomes: string[];
}

const FILTERS = ['workflow', 'status', 'outcome', 'source'] as const;

export function Executions({ query }: { query: URLSearchParams }) {
  const { data, error, reload } = useData<ExecutionList>(`executions?${query.toString()}`);
  useLive(['executions', 'imports', 'pauses'], reload);
  const set = (key: string, value: string) => {
    const next = new URLSearchParams(query);
    if (value) next.set(key, value);
    else next.delete(key);
    location.hash = `#/executions?${next.toString()}`;
  };
  const options: Record<(typeof FILTERS)[number], string[]> = {
    workflow: data?.workflows ?? [],
    status: data?.statuses ?? [],
    outcome: data?.outcomes ?? [],
    source: ['local', 'imported'],
  };
  return (
    <>
      <h1>Executions</h1>
      <form class="filters" aria-label="Filter executions" onSubmit={(e) => e.preventDefault()}>
        {FILTERS.map((key) => (
          <label key={key}>
            {key}
            <select value={query.get(key) ?? ''} onChange={(e) => set(key, (e.target as HTMLSelectElement).value)}>
              <option value="">any</option>
              {[...new Set([...(options[key] ?? []), ...(query.get(key) ? [query.get(key)!] : [])])].map((v) => (
                <option key={v} value={v}>
                  {v}
                </option>
              ))}
            </select>
          </label>
        ))}
      </form>
      <Problem message={error} />
      {!data && !error && <Loading what="executions" />}
      {data && (
        <table>
          <caption class="visually-hidden">Local and imported executions, newest first</caption>
          <Head columns={['Execution', 'Workflow', 'Status', 'Outcome', 'Steps', 'Started', 'Source']} />
          <tbody>
            {data.executions.map((e) => (
              <tr key={e.name}>
                <th scope="row">
                  <a href={`#/executions/${encodeURIComponent(e.name)}`}>{e.name}</a>
                  {e.parent && (
                    <span class="muted">
                      {' '}
                      (fork of {e.parent.execution} at {e.parent.step})
                    </span>
                  )}
                </th>
                <td>{e.workflow}</td>
                <td>
                  <Status status={e.status} />
                </td>
                <td>{e.outcome}</td>
                <td>{e.steps}</td>
                <td>{when(e.startDate)}</td>
                <td>{e.source}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {data && data.executions.length === 0 && (
        <p>No executions yet: run a sample from a workflow, or import a deployed one.</p>
      )}
      {data && data.unreadable > 0 && <p class="muted">{data.unreadable} unreadable record files skipped.</p>}
    </>
  );
}

/** `--aws`: the project's deployed executions, each importable (read-only). */
export function Deployed() {
  const { data, error } = useData<{ executions: DeployedExecution[] }>('aws/executions');
  const { problem, start } = useStart();
  const open = (arn: string) => start('aws/imports', { executionArn: arn });
  return (
    <>
      <h1>Deployed executions</h1>
      <Problem message={error ?? problem} />
      {!data && !error && <Loading what="deployed executions" />}
      {data && (
        <table>
          <caption class="visually-hidden">Deployed executions of this project’s workflows</caption>
          <Head columns={['Execution', 'Workflow', 'State machine', 'Status', 'Started', 'Open']} />
          <tbody>
            {data.executions.map((e) => (
              <tr key={e.executionArn}>
                <th scope="row">{e.name}</th>
                <td>{e.workflow}</td>
                <td>{e.stateMachine}</td>
                <td>
                  <Status status={e.status} />
                </td>
                <td>{when(e.startDate)}</td>
                <td>
                  <button type="button" onClick={() => open(e.executionArn)} aria-label={`Import and open ${e.name}`}>
                    Import and open
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}
