/** One step of an execution, as the execution page shows it when the step is selected. */

import type {
  ContentBlock,
  Message,
  SystemBlock,
  ToolResultContent,
} from '../../../../runtime/contracts/model-port.ts';
import type { StepView } from '../../views.ts';
import { Head, Json, kindName, ms, usd } from '../common.tsx';
import { ConstructDetails } from './construct.tsx';
import { Events } from './events.tsx';

type Transcript = NonNullable<StepView['transcript']>;

interface StepPanelProps {
  execution: string;
  step: StepView;
  /** Every step of the execution: a construct names the steps of its items and branches. */
  steps: StepView[];
  forkable: boolean;
}

export function StepPanel({ execution, step, steps, forkable }: StepPanelProps) {
  return (
    <article class="step" aria-labelledby="step-h">
      <h3 id="step-h">
        {step.index + 1}. {step.name}
      </h3>
      {step.description && <p>{step.description}</p>}
      {/* A fork re-runs the workflow from a step: not from inside one item or branch. */}
      {forkable && step.forkIndex !== undefined && !step.within && (
        <p>
          <a class="button" href={`#/executions/${encodeURIComponent(execution)}/fork/${step.forkIndex}`}>
            Fork from {step.name}
          </a>
        </p>
      )}
      <StepFacts step={step} />
      {step.construct && <ConstructDetails execution={execution} construct={step.construct} steps={steps} />}
      <section aria-labelledby="input-h">
        <h4 id="input-h">Input</h4>
        <Json value={step.input} label={`${step.name}: input`} />
      </section>
      {step.toolCalls.length > 0 && <ToolCalls step={step} />}
      {step.reply !== undefined && (
        <section aria-labelledby="reply-h">
          <h4 id="reply-h">Reply sent</h4>
          <pre class="text" tabIndex={0}>
            {step.reply}
          </pre>
        </section>
      )}
      {step.transcript && <ModelExchange transcript={step.transcript} />}
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
      <Events
        execution={execution}
        title={`ASL events ${step.events[0]}–${step.events[1]}`}
        label="The step's history events"
        range={step.events}
      />
    </article>
  );
}

const tokensText = (u: NonNullable<StepView['usage']>) =>
  `${u.inputTokens} in / ${u.outputTokens} out, ` +
  `cache ${u.cacheReadInputTokens} read / ${u.cacheWriteInputTokens} written, ${u.modelCalls} model calls`;

/** What a step's error says: a Lambda error's `cause` is `{ errorType, errorMessage, trace }` as JSON. */
function causeText(cause: string): string {
  try {
    const message = (JSON.parse(cause) as { errorMessage?: unknown }).errorMessage;
    if (typeof message === 'string') return message;
  } catch {
    // Not JSON: the cause is the message.
  }
  return cause.split('\n')[0]!;
}

/** Kind, decision or error, latency, retries, tokens and cost. */
function StepFacts({ step }: { step: StepView }) {
  const { decision } = step;
  return (
    <dl class="facts-list">
      <dt>Kind</dt>
      <dd>{kindName(step.kind)}</dd>
      {decision && (
        <>
          <dt>Decision</dt>
          <dd>
            next <strong>{decision.next}</strong>, decided by {decision.decidedBy ?? '?'}: {decision.reason}
          </dd>
        </>
      )}
      {step.why && (
        <>
          <dt>Why this route</dt>
          <dd data-testid="why-route">{step.why}</dd>
        </>
      )}
      {step.error && (
        <>
          <dt>Error</dt>
          <dd class="problem-text">
            {step.error.error}
            {step.error.cause ? `: ${causeText(step.error.cause)}` : ''}
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
      <dd data-testid="step-tokens">{step.usage ? tokensText(step.usage) : 'none'}</dd>
      {step.cost && (
        <>
          <dt>Cost</dt>
          <dd>
            {usd(step.cost.usd)} at {step.cost.modelId} list prices{step.cost.note ? ` (${step.cost.note})` : ''}
          </dd>
        </>
      )}
    </dl>
  );
}

function ToolCalls({ step }: { step: StepView }) {
  return (
    <section aria-labelledby="tools-h">
      <h4 id="tools-h">Tool calls</h4>
      <table>
        <caption class="visually-hidden">Tool calls of {step.name}</caption>
        <Head columns={['Tool', 'Arguments', 'Result', 'Guard']} />
        <tbody>
          {step.toolCalls.map((c, i) => (
            <ToolCall key={i} call={c} />
          ))}
        </tbody>
      </table>
    </section>
  );
}

function ToolCall({ call: c }: { call: StepView['toolCalls'][number] }) {
  return (
    <tr class={c.error !== undefined ? 'refused' : ''}>
      <th scope="row">{c.tool}</th>
      <td>
        <Json value={c.args} label={`${c.tool} arguments`} />
      </td>
      <td>
        {c.error !== undefined ? (
          <span class="problem-text">refused or failed: {c.error}</span>
        ) : (
          <Json value={c.result} label={`${c.tool} result`} />
        )}
      </td>
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
  );
}

/** The model request and response of an LLM step: system prompt, tools, then each call's messages. */
function ModelExchange({ transcript: t }: { transcript: Transcript }) {
  const provider = t.provider === 'offline' ? 'offline stand-in (not an LLM)' : `Bedrock ${t.modelId ?? ''}`;
  return (
    <section aria-labelledby="model-h" class="model">
      <h4 id="model-h">Model request and response</h4>
      <p class="muted">
        {provider} · prompt v{t.stepVersion} · {t.calls.length} call{t.calls.length === 1 ? '' : 's'}
        {t.truncated && ' · shortened to stay within the recorded size'}
      </p>
      <details>
        <summary>System prompt</summary>
        {t.system.map((b, i) => (
          <pre class="text" key={i} tabIndex={0}>
            {blockText(b)}
          </pre>
        ))}
      </details>
      <details>
        <summary>Tool configuration ({t.toolConfig?.tools.map((x) => x.toolSpec.name).join(', ') ?? 'none'})</summary>
        <Json
          value={{ toolConfig: t.toolConfig, inferenceConfig: t.inferenceConfig }}
          label="Tool configuration and inference settings"
        />
      </details>
      {t.calls.map((_, k) => (
        <ModelCall key={k} transcript={t} index={k} />
      ))}
    </section>
  );
}

/** One call to the model: the messages sent since the previous call, then its response. */
function ModelCall({ transcript: t, index: k }: { transcript: Transcript; index: number }) {
  const call = t.calls[k]!;
  const sent = t.messages.slice(k === 0 ? 0 : t.calls[k - 1]!.messages + 1, call.messages);
  return (
    <details open={k === t.calls.length - 1}>
      <summary>
        Call {k + 1}: {call.stopReason}, {call.usage.inputTokens} in / {call.usage.outputTokens} out tokens,{' '}
        {ms(call.durationMs)}
      </summary>
      {sent.map((m, i) => (
        <MessageBlocks key={i} message={m} title={m.role === 'user' ? 'Sent' : 'Earlier answer'} />
      ))}
      {t.messages[call.messages] && <MessageBlocks message={t.messages[call.messages]!} title="Response" />}
    </details>
  );
}

const resultText = (c: ToolResultContent) => ('text' in c ? c.text : JSON.stringify(c.json));

const blockText = (b: ContentBlock | SystemBlock): string =>
  'text' in b
    ? b.text
    : 'cachePoint' in b
      ? '[cache point]'
      : 'toolUse' in b
        ? `tool call ${b.toolUse.name} ${JSON.stringify(b.toolUse.input, null, 2)}`
        : `tool result (${b.toolResult.status ?? 'success'}) ${b.toolResult.content.map(resultText).join('\n')}`;

function MessageBlocks({ message, title }: { message: Message; title: string }) {
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
