import { useState } from 'preact/hooks';
import type { PauseSummary } from '../../../../local/sessions/workflow-session.ts';
import { path } from '../api.ts';
import { Json, Loading, Problem, when } from '../common.tsx';
import { useData, useLive, useStart } from '../hooks.ts';
import { actionLines, EMPTY_OUTPUT } from '../pause-text.ts';

type Paused = PauseSummary & { fields: unknown };

/**
 * Checkpoints waiting for a person: approve with an output (SendTaskSuccess) or reject (SendTaskFailure), as `stepwise
 * resume` does.
 */
export function Pauses() {
  const { data, error, reload } = useData<Paused[]>('pauses');
  useLive(['pauses'], reload);
  return (
    <>
      <h1>Pauses</h1>
      <Problem message={error} />
      {!data && !error && <Loading what="paused executions" />}
      {data?.length === 0 && <p>No execution waits at a checkpoint.</p>}
      {data?.map((p) => (
        <PauseCard key={p.execution} pause={p} />
      ))}
    </>
  );
}

function PauseCard({ pause }: { pause: Paused }) {
  const [output, setOutput] = useState(EMPTY_OUTPUT);
  const [reason, setReason] = useState('');
  const { busy, problem, setProblem, start } = useStart();
  const id = pause.execution.replace(/[^A-Za-z0-9_-]/g, '_');
  const resume = (body: unknown) => start(path('pauses', pause.execution, 'resume'), body);
  const approve = (e: Event) => {
    e.preventDefault();
    let value: unknown;
    try {
      value = JSON.parse(output);
    } catch (err) {
      return setProblem(`the output is not JSON: ${(err as Error).message}`);
    }
    void resume({ output: value });
  };
  const reject = (e: Event) => {
    e.preventDefault();
    if (!reason.trim()) return setProblem('say why you reject it');
    void resume({ fail: reason });
  };
  const actions = actionLines(pause.requiredActions);
  return (
    <article class="card" aria-labelledby={`pause-${id}`}>
      <h2 id={`pause-${id}`}>
        <a href={`#/executions/${encodeURIComponent(pause.execution)}`}>{pause.execution}</a>
      </h2>
      <p>
        {pause.workflow} · paused at {pause.state}
        {pause.next && ` (then ${pause.next})`} since {when(pause.pausedAt)}
        {pause.deadline && `, times out at ${when(pause.deadline)}`}
      </p>
      {actions.length > 0 && (
        <>
          <h3>Required actions</h3>
          <ul>
            {actions.map((a) => (
              <li key={a}>{a}</li>
            ))}
          </ul>
        </>
      )}
      <details>
        <summary>What the step reported</summary>
        <Json value={pause.fields} label="The paused step's outputs" />
      </details>
      <form onSubmit={approve}>
        <label for={`output-${id}`}>
          Output (JSON, what the required actions ask for; the next step reads it as data.checkpoint)
        </label>
        <textarea
          id={`output-${id}`}
          rows={5}
          value={output}
          onInput={(e) => setOutput((e.target as HTMLTextAreaElement).value)}
          spellcheck={false}
        />
        <button type="submit" disabled={busy}>
          Approve {pause.execution}
        </button>
      </form>
      <form onSubmit={reject}>
        <label for={`reason-${id}`}>Reason to reject</label>
        <input id={`reason-${id}`} value={reason} onInput={(e) => setReason((e.target as HTMLInputElement).value)} />
        <button type="submit" class="secondary" disabled={busy}>
          Reject {pause.execution}
        </button>
      </form>
      <Problem message={problem} />
    </article>
  );
}
