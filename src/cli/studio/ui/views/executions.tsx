import type { ExecutionList, ExecutionListing } from '../../../../local/records/execution-list.ts';
import type { DeployedExecution } from '../../../../local/records/import.ts';
import { Head, Loading, Problem, Status, when } from '../common.tsx';
import { useData, useLive, useStart } from '../hooks.ts';

const FILTERS = ['workflow', 'status', 'outcome', 'step', 'error', 'source'] as const;
const SORTS = ['started', 'duration', 'steps', 'outcome', 'name'] as const;

/** An execution's link: an imported one names its folder (a local one may have its name). */
export const executionHref = (e: Pick<ExecutionListing, 'name' | 'source'>) =>
  `#/executions/${encodeURIComponent(e.name)}${e.source === 'imported' ? '?source=imported' : ''}`;

/** What an execution was about: its identifying fields, `subject · from`. */
const aboutText = (e: ExecutionListing) => Object.values(e.about).join(' · ');

export function Executions({ query }: { query: URLSearchParams }) {
  const { data, error, reload } = useData<ExecutionList>(`executions?${query.toString()}`);
  useLive(['executions', 'imports', 'pauses', 'refused'], reload);
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
    step: data?.steps ?? [],
    error: ['any', ...(data?.errors ?? [])],
    source: ['local', 'imported'],
  };
  return (
    <>
      <h1>Executions</h1>
      <form
        class="filters"
        role="search"
        aria-label="Search and filter executions"
        onSubmit={(e) => {
          e.preventDefault();
          set('q', String(new FormData(e.target as HTMLFormElement).get('q') ?? '').trim());
        }}
      >
        <label>
          Search inputs, outputs and replies
          <input type="search" name="q" defaultValue={query.get('q') ?? ''} key={query.get('q') ?? ''} />
        </label>
        <button type="submit">Search</button>
        {FILTERS.map((key) => (
          <Choice
            key={key}
            name={key === 'step' ? 'step visited' : key}
            value={query.get(key) ?? ''}
            values={options[key]}
            onChange={(v) => set(key, v)}
          />
        ))}
        {(['since', 'until'] as const).map((key) => (
          <label key={key}>
            {key}
            <input
              type="date"
              value={query.get(key)?.slice(0, 10) ?? ''}
              onChange={(e) => {
                const day = (e.target as HTMLInputElement).value;
                set(key, day && `${day}T${key === 'since' ? '00:00:00' : '23:59:59'}Z`);
              }}
            />
          </label>
        ))}
        <Choice name="sort by" value={query.get('sort') ?? ''} values={[...SORTS]} onChange={(v) => set('sort', v)} />
        <Choice
          name="order"
          value={query.get('order') ?? ''}
          values={['desc', 'asc']}
          onChange={(v) => set('order', v)}
        />
      </form>
      <Problem message={error} />
      {!data && !error && <Loading what="executions" />}
      {data && <ExecutionTable executions={data.executions} />}
      {data && data.total > data.executions.length && (
        <p class="muted">
          Showing {data.executions.length} of {data.total}: search or filter to narrow them.
        </p>
      )}
      {data && data.total === 0 && <p>No executions match: run a sample from a workflow, or import a deployed one.</p>}
      {data && data.unreadable > 0 && <p class="muted">{data.unreadable} unreadable record files skipped.</p>}
    </>
  );
}

function Choice(props: { name: string; value: string; values: string[]; onChange: (value: string) => void }) {
  const { name, value, values, onChange } = props;
  return (
    <label>
      {name}
      <select value={value} onChange={(e) => onChange((e.target as HTMLSelectElement).value)}>
        <option value="">any</option>
        {[...new Set([...values, ...(value ? [value] : [])])].map((v) => (
          <option key={v} value={v}>
            {v}
          </option>
        ))}
      </select>
    </label>
  );
}

function ExecutionTable({ executions }: { executions: ExecutionListing[] }) {
  return (
    <table>
      <caption class="visually-hidden">Executions and refused mail</caption>
      <Head columns={['About', 'Workflow', 'Status', 'Outcome', 'Steps', 'Started', 'Source']} />
      <tbody>
        {executions.map((e) => (
          <tr key={`${e.source}/${e.kind}/${e.name}`}>
            <th scope="row">
              {e.kind === 'refused' ? (
                <span>{aboutText(e) || e.name}</span>
              ) : (
                <a href={executionHref(e)}>{aboutText(e) || e.name}</a>
              )}
              <div class="muted small">
                {e.name}
                {e.parent && ` (fork of ${e.parent.execution} at ${e.parent.step})`}
              </div>
            </th>
            <td>{e.workflow}</td>
            <td>
              <Status status={e.status} />
            </td>
            <td>
              {e.outcome}
              {e.detail && <div class="muted small">{e.detail}</div>}
            </td>
            <td>{e.visited.length}</td>
            <td>{when(e.startDate)}</td>
            <td>{e.source}</td>
          </tr>
        ))}
      </tbody>
    </table>
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
