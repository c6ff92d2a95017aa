import { useState } from 'preact/hooks';
import { Json, Loading, ms, Problem, Status, usd, when, Head } from '../common.tsx';
import { Graph } from '../graph.tsx';
import { useData, useLive } from '../hooks.ts';
import type { ExecutionView, StepView, WorkflowGraph } from '../../views.ts';
import type { PauseSummary } from '../../../../local/workflow-session.ts';
import type { ContentBlock, Message, SystemBlock } from '../../../../runtime/models/port.ts';

type Detail = ExecutionView & { pause?: PauseSummary; forks: { name: string; step: string; status: string }[] };

export function Execution({ name, query }: { name: string; query: URLSearchParams }) {
  const { data, error, reload } = useData<Detail>(`executions/${encodeURIComponent(name)}`);
  useLive(['executions', 'imports', 'pauses'], reload, [name]);
  const graph = useData<{ graph: WorkflowGraph }>(data?.record.workflow ? `workflows/${encodeURIComponent(data.record.workflow)}` : null);
  const selected = Number(query.get('step') ?? 0);
  const select = (index: number) => {
    location.hash = `#/executions/${encodeURIComponent(name)}?step=${index}`;
  };
  if (!data)
    return (
      <>
        <h1>{name}</h1>
        {error ? <Problem message={error} /> : <Loading what={name} />}
        {error && /not started yet/.test(error) && <p class="muted">Waiting for it to start; this page updates by itself.</p>}
      </>
    );
  const { record } = data;
  const step = data.steps[selected] ?? data.steps[0];
  const seconds = record.stopDate ? (Date.parse(record.stopDate) - Date.parse(record.startDate)) / 1000 : undefined;
  return (
    <>
      <h1>
        {name} <Status status={data.pause ? 'PAUSED' : record.status} />
      </h1>
      <p class="facts">
        {record.workflow && (
          <>
            workflow <a href={`#/workflows/${encodeURIComponent(record.workflow)}`}>{record.workflow}</a> ·{' '}
          </>
        )}
        {record.source === 'imported' ? `imported from ${record.imported?.from === 'aws' ? 'AWS' : 'a file'}` : 'local'} · started {when(record.startDate)}
        {seconds !== undefined && ` · ${seconds.toFixed(2)} s`} · {data.steps.filter((s) => s.kind !== 'pause').length} steps · {data.stateTransitions} state transitions · tokens{' '}
        {data.usage.inputTokens} in / {data.usage.outputTokens} out ({data.usage.modelCalls} model calls)
        {data.cost && ` · ${usd(data.cost.usd)} at ${data.cost.modelId} list prices`}
        {record.outcome && ` · outcome ${record.outcome}`}
      </p>
      <p class="muted">{record.executionArn}</p>
      {record.parent && (
        <p>
          Fork of <a href={`#/executions/${encodeURIComponent(record.parent.execution)}`}>{record.parent.execution}</a> from step {record.parent.step}:{' '}
          <a href={`#/diff/${encodeURIComponent(record.parent.execution)}/${encodeURIComponent(name)}`}>compare with its parent</a>
        </p>
      )}
      {data.forks.length > 0 && (
        <p>
          Forks:{' '}
          {data.forks.map((f, i) => (
            <span key={f.name}>
              {i > 0 && ', '}
              <a href={`#/executions/${encodeURIComponent(f.name)}`}>{f.name}</a> (from {f.step}, {f.status.toLowerCase()}) ·{' '}
              <a href={`#/diff/${encodeURIComponent(name)}/${encodeURIComponent(f.name)}`}>diff</a>
            </span>
          ))}
        </p>
      )}
      {data.pause && (
        <p class="callout">
          Paused at {data.pause.state}: <a href="#/pauses">approve or reject it under Pauses</a>.
        </p>
      )}
      {record.error && <Problem message={`${record.error.Error}${record.error.Cause ? `: ${record.error.Cause.split('\n')[0]}` : ''}`} />}
      <div class="split">
        <section aria-labelledby="path-h" class="pane">
          <h2 id="path-h">Path</h2>
          {graph.data ? (
            <Graph
              graph={graph.data.graph}
              path={data.path}
              selected={step?.name}
              label={`${record.workflow}: the path of ${name}`}
              onSelect={(node) => {
                const at = data.steps.findIndex((s) => s.name === node.id || s.name === node.step);
                if (at >= 0) select(at);
              }}
            />
          ) : (
            <Loading what="the graph" />
          )}
          <Timeline steps={data.steps} start={record.startDate} selected={step?.index} onSelect={select} />
        </section>
        <section aria-labelledby="steps-h" class="pane">
          <h2 id="steps-h">Steps</h2>
          <ol class="steps">
            {data.steps.map((s) => (
              <li key={s.index}>
                <button type="button" aria-pressed={s.index === step?.index} onClick={() => select(s.index)} class={s.error ? 'failed' : ''}>
                  <span class="step-name">{s.name}</span>
                  <span class="muted">
                    {s.decision ? ` → ${s.decision.next}` : s.error ? ` ✗ ${s.error.error}` : ''}
                    {s.retries ? ` ↻${s.retries}` : ''}
                  </span>
                </button>
              </li>
            ))}
          </ol>
          {step && <StepPanel execution={name} step={step} forkable={record.workflow !== undefined} />}
        </section>
      </div>
      <Events execution={name} title={`Raw ASL events (${data.eventCount})`} label="Every history event of the execution" class="raw" />
    </>
  );
}

function Timeline({ steps, start, selected, onSelect }: { steps: StepView[]; start: string; selected?: number; onSelect: (i: number) => void }) {
  const t0 = Date.parse(start);
  const end = Math.max(t0 + 1, ...steps.map((s) => Date.parse(s.exitedAt ?? s.enteredAt)));
  const span = end - t0;
  return (
    <div class="timeline" role="group" aria-label="Timeline of the steps">
      {steps.map((s) => {
        const left = ((Date.parse(s.enteredAt) - t0) / span) * 100;
        const width = Math.max(0.8, (((s.exitedAt ? Date.parse(s.exitedAt) : end) - Date.parse(s.enteredAt)) / span) * 100);
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

const blockText = (b: ContentBlock | SystemBlock): string =>
  'text' in b
    ? b.text
    : 'cachePoint' in b
      ? '[cache point]'
      : 'toolUse' in b
        ? `tool call ${b.toolUse.name} ${JSON.stringify(b.toolUse.input, null, 2)}`
        : `tool result (${b.toolResult.status ?? 'success'}) ${b.toolResult.content.map((c) => ('text' in c ? c.text : JSON.stringify(c.json))).join('\n')}`;

function Message({ message, title }: { message: Message; title: string }) {
  return (
    <div class={`message message-${message.role}`}>
      <h5>{title}</h5>
      {message.content.map((b, i) => (
        <pre class="text" key={i} tabIndex={0}>
          {blockText(b)}
        </pre>
      ))}
    </div>
  );
}

/** History events, fetched when the section is opened (they repeat every input and output). */
function Events({ execution, title, label, range, class: className }: { execution: string; title: string; label: string; range?: [number, number]; class?: string }) {
  const [open, setOpen] = useState(false);
  const { data, error } = useData<{ id?: number }[]>(open ? `executions/${encodeURIComponent(execution)}/events` : null);
  return (
    <details class={className} onToggle={(e) => setOpen((e.target as HTMLDetailsElement).open)}>
      <summary>{title}</summary>
      {open && (data ? <Json value={range ? data.filter((e) => e.id! >= range[0] && e.id! <= range[1]) : data} label={label} /> : error ? <Problem message={error} /> : <Loading what="the events" />)}
    </details>
  );
}

function StepPanel({ execution, step, forkable }: { execution: string; step: StepView; forkable: boolean }) {
  const t = step.transcript;
  return (
    <article class="step" aria-labelledby="step-h">
      <h3 id="step-h">
        {step.index + 1}. {step.name}
      </h3>
      {step.description && <p>{step.description}</p>}
      {forkable && step.forkIndex !== undefined && (
        <p>
          <a class="button" href={`#/executions/${encodeURIComponent(execution)}/fork/${step.forkIndex}`}>
            Fork from {step.name}
          </a>
        </p>
      )}
      <dl class="facts-list">
        <dt>Kind</dt>
        <dd>{step.kind === 'llm' ? 'LLM step' : step.kind === 'code' ? 'code step' : step.kind}</dd>
        {step.decision && (
          <>
            <dt>Decision</dt>
            <dd>
              next <strong>{step.decision.next}</strong>, decided by {step.decision.decidedBy ?? '?'}: {step.decision.reason}
            </dd>
          </>
        )}
        {step.error && (
          <>
            <dt>Error</dt>
            <dd class="problem-text">
              {step.error.error}
              {step.error.cause ? `: ${step.error.cause.split('\n')[0]}` : ''}
            </dd>
          </>
        )}
        <dt>Latency</dt>
        <dd>
          {ms(step.latencyMs)}
          {step.durationMs !== undefined && ` (the handler: ${ms(step.durationMs)})`}
        </dd>
        <dt>Retries</dt>
        <dd>{step.retries}</dd>
        <dt>Tokens</dt>
        <dd data-testid="step-tokens">
          {step.usage ? `${step.usage.inputTokens} in / ${step.usage.outputTokens} out, cache ${step.usage.cacheReadInputTokens} read / ${step.usage.cacheWriteInputTokens} written, ${step.usage.modelCalls} model calls` : 'none'}
        </dd>
        {step.cost && (
          <>
            <dt>Cost</dt>
            <dd>
              {usd(step.cost.usd)} at {step.cost.modelId} list prices{step.cost.note ? ` (${step.cost.note})` : ''}
            </dd>
          </>
        )}
      </dl>
      <section aria-labelledby="input-h">
        <h4 id="input-h">Input</h4>
        <Json value={step.input} label={`${step.name}: input`} />
      </section>
      {step.toolCalls.length > 0 && (
        <section aria-labelledby="tools-h">
          <h4 id="tools-h">Tool calls</h4>
          <table>
            <caption class="visually-hidden">Tool calls of {step.name}</caption>
            <Head columns={['Tool', 'Arguments', 'Result', 'Guard']} />
            <tbody>
              {step.toolCalls.map((c, i) => (
                <tr key={i} class={c.error !== undefined ? 'refused' : ''}>
                  <th scope="row">{c.tool}</th>
                  <td>
                    <Json value={c.args} label={`${c.tool} arguments`} />
                  </td>
                  <td>{c.error !== undefined ? <span class="problem-text">refused or failed: {c.error}</span> : <Json value={c.result} label={`${c.tool} result`} />}</td>
                  <td>
                    {c.guard?.length
                      ? c.guard.map((v) => (
                          <div key={v.check} class={v.passed ? 'pass' : 'fail'}>
                            {v.passed ? '✓' : '✗'} {v.check} ({v.lane}){v.found?.length ? `: ${v.found.join(', ')}` : ''}
                          </div>
                        ))
                      : '—'}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </section>
      )}
      {step.reply !== undefined && (
        <section aria-labelledby="reply-h">
          <h4 id="reply-h">Reply sent</h4>
          <pre class="text" tabIndex={0}>
            {step.reply}
          </pre>
        </section>
      )}
      {t && (
        <section aria-labelledby="model-h" class="model">
          <h4 id="model-h">Model request and response</h4>
          <p class="muted">
            {t.provider === 'offline' ? 'offline stand-in (not an LLM)' : `Bedrock ${t.modelId ?? ''}`} · prompt v{t.stepVersion} · {t.calls.length} call{t.calls.length === 1 ? '' : 's'}
            {t.truncated && ' · shortened to stay within the recorded size'}
          </p>
          <details open>
            <summary>System prompt</summary>
            {t.system.map((b, i) => (
              <pre class="text" key={i} tabIndex={0}>
                {blockText(b)}
              </pre>
            ))}
          </details>
          <details>
            <summary>Tool configuration ({t.toolConfig?.tools.map((x) => x.toolSpec.name).join(', ') ?? 'none'})</summary>
            <Json value={{ toolConfig: t.toolConfig, inferenceConfig: t.inferenceConfig }} label="Tool configuration and inference settings" />
          </details>
          {t.calls.map((call, k) => (
            <details key={k} open={k === t.calls.length - 1}>
              <summary>
                Call {k + 1}: {call.stopReason}, {call.usage.inputTokens} in / {call.usage.outputTokens} out tokens, {ms(call.durationMs)}
              </summary>
              {t.messages.slice(k === 0 ? 0 : t.calls[k - 1]!.messages + 1, call.messages).map((m, i) => (
                <Message key={i} message={m} title={m.role === 'user' ? 'Sent' : 'Earlier answer'} />
              ))}
              {t.messages[call.messages] && <Message message={t.messages[call.messages]!} title="Response" />}
            </details>
          ))}
        </section>
      )}
      {step.consensus && (
        <section aria-labelledby="consensus-h">
          <h4 id="consensus-h">Consensus</h4>
          <Json value={step.consensus} label="How the samples voted" />
        </section>
      )}
      <details>
        <summary>Output</summary>
        <Json value={step.output} label={`${step.name}: output`} />
      </details>
      <Events execution={execution} title={`ASL events ${step.events[0]}–${step.events[1]}`} label="The step's history events" range={step.events} />
    </article>
  );
}
