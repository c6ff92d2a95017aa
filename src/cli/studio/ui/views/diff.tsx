import type { ExecutionDiff, StepSide } from '../../../../local/records/fork.ts';
import { Head, Loading, Problem, Status } from '../common.tsx';
import { useData, useLive } from '../hooks.ts';

function Side({ side }: { side?: StepSide }) {
  if (!side) return <td class="muted">(not run)</td>;
  return (
    <td>
      <strong>{side.step}</strong>
      {side.next && <> → {side.next}</>}
      {side.error && <span class="problem-text"> ✗ {side.error}</span>}
      {side.reason && <div class="muted">{side.reason}</div>}
      {side.fields && Object.keys(side.fields).length > 0 && (
        <pre class="json small" tabIndex={0}>
          {JSON.stringify(side.fields, null, 2)}
        </pre>
      )}
      {side.reply && (
        <pre class="text small" tabIndex={0}>
          {side.reply}
        </pre>
      )}
      {side.usage && (
        <div class="muted">
          {side.usage.inputTokens} in / {side.usage.outputTokens} out tokens
        </div>
      )}
    </td>
  );
}

/** Two runs side by side (a fork and its parent): path, outputs, replies, tokens. */
export function Diff({ a, b }: { a: string; b: string }) {
  const { data, error, reload } = useData<ExecutionDiff>(`diff?a=${encodeURIComponent(a)}&b=${encodeURIComponent(b)}`);
  useLive(['executions', 'imports'], reload, [a, b]);
  return (
    <>
      <h1>Compare two runs</h1>
      <Problem message={error} />
      {!data && !error && <Loading what="the comparison" />}
      {data && (
        <>
          <p>
            {data.divergesAt === null ? 'Both took the same path.' : `The paths part at step ${data.divergesAt + 1}.`}{' '}
            Tokens: {data.a.usage.inputTokens}/{data.a.usage.outputTokens} vs {data.b.usage.inputTokens}/
            {data.b.usage.outputTokens} (in/out).
          </p>
          {data.changes.length > 0 && (
            <section aria-labelledby="changes-h">
              <h2 id="changes-h">What the fork changed</h2>
              <ul data-testid="fork-changes">
                {data.changes.map((c) => (
                  <li key={c.what}>
                    <code>{c.what}</code>: {c.from !== undefined && <>{JSON.stringify(c.from)} → </>}
                    {JSON.stringify(c.to)}
                  </li>
                ))}
              </ul>
            </section>
          )}
          <p data-testid="paths">
            Path of {a}: {data.a.path.join(' → ')}
            <br />
            Path of {b}: {data.b.path.join(' → ')}
          </p>
          <table class="diff">
            <caption class="visually-hidden">Step by step</caption>
            <Head
              columns={[
                '#',
                <>
                  <a href={`#/executions/${encodeURIComponent(a)}`}>{a}</a> <Status status={data.a.status} />
                </>,
                <>
                  <a href={`#/executions/${encodeURIComponent(b)}`}>{b}</a> <Status status={data.b.status} />
                </>,
                'Differs in',
              ]}
            />
            <tbody>
              {data.steps.map((s) => (
                <tr key={s.index} class={s.differs.length ? 'differs' : ''}>
                  <th scope="row">{s.index + 1}</th>
                  <Side side={s.a} />
                  <Side side={s.b} />
                  <td>{s.differs.join(', ') || 'same'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
    </>
  );
}
