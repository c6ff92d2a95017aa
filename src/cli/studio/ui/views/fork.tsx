import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import type { PromptVersion } from '../../../../local/records/prompt-versions.ts';
import { path, post } from '../api.ts';
import { Loading, Problem } from '../common.tsx';
import { useData, useStart } from '../hooks.ts';

interface ForkForm {
  execution: string;
  point: { index: number; step: string; entryState: string };
  kind: string;
  stepInput: Record<string, unknown>;
  toolResults: Record<string, Record<string, unknown>>;
  prompts: PromptVersion[];
  models: string[];
  answer?: {
    next?: string;
    fields?: Record<string, unknown>;
    edges: string[];
    outputs: Record<string, { from?: string }>;
    tools: string[];
  };
  email?: { subject: string; from: string; fromName: string; body?: string };
}

interface InputProblem {
  path: string;
  message: string;
}

const parse = (text: string): { value?: unknown; error?: string } => {
  try {
    return { value: JSON.parse(text) };
  } catch (e) {
    return { error: `not JSON: ${(e as Error).message}` };
  }
};

/**
 * Re-run an execution from one step: the step input at that step (checked against the step's input schema as you
 * type), pinned tool results, the model and the prompt version.
 */
export function Fork({ execution, from }: { execution: string; from: string }) {
  const { data, error } = useData<ForkForm>(
    `${path('executions', execution, 'fork')}?from=${encodeURIComponent(from)}`,
  );
  const [input, setInput] = useState('');
  const [tools, setTools] = useState('');
  const [model, setModel] = useState('offline');
  const [prompt, setPrompt] = useState('current');
  const { busy, problem: submitError, start } = useStart();
  const answer = useAnswer(data);
  const email = useEmailEdit(data);
  useEffect(() => {
    if (!data) return;
    setInput(JSON.stringify(data.stepInput, null, 2));
    setTools(JSON.stringify(data.toolResults, null, 2));
  }, [data]);
  const problems = useStepInputProblems(execution, data, input);
  const toolProblem = useToolResultsProblem(tools);
  if (!data) return <>{error ? <Problem message={error} /> : <Loading what="the fork" />}</>;
  const submit = (e: Event) => {
    e.preventDefault();
    const stepInput = parse(input).value as Record<string, unknown>;
    const results = parse(tools || '{}').value as Record<string, unknown>;
    void start(path('executions', execution, 'fork'), {
      from: data.point.index,
      ...(email.edits ? { email: email.edits } : { stepInput }),
      ...(Object.keys(results).length && { toolResults: { [data.point.step]: results } }),
      ...(answer.pinned && { answer: answer.pinned }),
      model,
      ...(prompt !== 'current' && { prompt }),
    });
  };
  const blocked = problems.length > 0 || toolProblem !== undefined || answer.problem !== undefined || busy;
  const { step } = data.point;
  return (
    <>
      <h1>
        Fork {execution} from {step}
      </h1>
      <ForkIntro execution={execution} point={data.point} />
      <form onSubmit={submit} class="fork">
        <JsonField
          id="fork-input"
          label={<>Step input of {step} (its input, previous result, error): checked against the step's input schema</>}
          rows={18}
          value={input}
          onInput={setInput}
          check={schemaCheck(problems)}
        />
        <JsonField
          id="fork-tools"
          label={<>Tool results of {step} (answered instead of running the tool; remove one to run it for real)</>}
          rows={8}
          value={tools}
          onInput={setTools}
          check={jsonCheck(toolProblem)}
        />
        {data.answer && <AnswerFields step={step} edges={data.answer.edges} state={answer} />}
        {data.email && <EmailFields state={email} />}
        <div class="row">
          <ModelChoice models={data.models} value={model} onChange={setModel} />
          {data.kind === 'llm' && (
            <PromptChoice step={step} prompts={data.prompts} value={prompt} onChange={setPrompt} />
          )}
        </div>
        <Problem message={submitError} />
        <button type="submit" disabled={blocked}>
          {busy ? 'Starting the fork…' : 'Run the fork'}
        </button>
      </form>
    </>
  );
}

/** The step input's problems: not JSON, or what the step's input schema says of it, a moment after each edit. */
function useStepInputProblems(execution: string, data: ForkForm | undefined, input: string): InputProblem[] {
  const [problems, setProblems] = useState<InputProblem[]>([]);
  // Checked on the server, against the schema the step handler uses.
  useEffect(() => {
    if (!data || !input) return;
    const parsed = parse(input);
    if (parsed.error) return setProblems([{ path: '(root)', message: parsed.error }]);
    const timer = setTimeout(() => {
      const check = { from: data.point.index, stepInput: parsed.value };
      post<{ problems: InputProblem[] }>(`${path('executions', execution, 'fork', 'check')}`, check).then(
        (r) => setProblems(r.problems),
        (e: Error) => setProblems([{ path: '(root)', message: e.message }]),
      );
    }, 250);
    return () => clearTimeout(timer);
  }, [input, data]);
  return problems;
}

const NOT_AN_OBJECT = 'tool results must be a JSON object: { "tool": { ...result } }';

/** Why the pinned tool results cannot be sent, if they cannot. */
function useToolResultsProblem(tools: string): string | undefined {
  const [toolProblem, setToolProblem] = useState<string>();
  useEffect(() => {
    const parsed = parse(tools || '{}');
    const isObject = parsed.value && typeof parsed.value === 'object' && !Array.isArray(parsed.value);
    setToolProblem(parsed.error ?? (isObject ? undefined : NOT_AN_OBJECT));
  }, [tools]);
  return toolProblem;
}

/** What checking a field's text found, announced as it changes; `invalid` marks the field. */
interface FieldCheck {
  invalid: boolean;
  message: ComponentChildren;
}

const schemaCheck = (problems: InputProblem[]): FieldCheck => ({
  invalid: problems.length > 0,
  message: problems.length
    ? problems.map((p) => <div key={p.path + p.message}>{`${p.path}: ${p.message}`}</div>)
    : 'Matches the step input schema.',
});

/** A field whose text need only be JSON: its problem, or that it is valid. */
const jsonCheck = (problem: string | undefined): FieldCheck => ({
  invalid: problem !== undefined,
  message: problem ?? 'Valid JSON.',
});

interface JsonFieldProps {
  id: string;
  label: ComponentChildren;
  rows: number;
  value: string;
  onInput: (text: string) => void;
  check: FieldCheck;
}

function JsonField({ id, label, rows, value, onInput, check: { invalid, message } }: JsonFieldProps) {
  return (
    <>
      <label for={id}>{label}</label>
      <textarea
        id={id}
        rows={rows}
        spellcheck={false}
        value={value}
        onInput={(e) => onInput((e.target as HTMLTextAreaElement).value)}
        aria-describedby={`${id}-check`}
        aria-invalid={invalid}
      />
      <div id={`${id}-check`} aria-live="polite" class={invalid ? 'problem' : 'ok'}>
        {message}
      </div>
    </>
  );
}

interface ChoiceProps {
  value: string;
  onChange: (value: string) => void;
}

function ModelChoice({ models, value, onChange }: ChoiceProps & { models: string[] }) {
  return (
    <label>
      Model provider
      <select value={value} onChange={(e) => onChange((e.target as HTMLSelectElement).value)}>
        {models.map((m) => (
          <option key={m} value={m}>
            {m === 'offline' ? 'offline stand-in (not an LLM)' : 'Bedrock (needs AWS credentials)'}
          </option>
        ))}
      </select>
    </label>
  );
}

const promptName = (p: PromptVersion) =>
  p.ref === 'current'
    ? `v${p.version} (current)`
    : `v${p.version}, ${p.ref.slice(0, 8)} ${p.date?.slice(0, 10) ?? ''} ${p.subject ?? ''}`;

function PromptChoice({ step, prompts, value, onChange }: ChoiceProps & { step: string; prompts: PromptVersion[] }) {
  return (
    <label>
      Prompt version of {step}
      <select value={value} onChange={(e) => onChange((e.target as HTMLSelectElement).value)}>
        {prompts.map((p) => (
          <option key={p.ref} value={p.ref}>
            {promptName(p)}
          </option>
        ))}
      </select>
    </label>
  );
}

/** The model's answer to pin: on or off, its route, its outputs and the tool calls it asks for. */
function useAnswer(data: ForkForm | undefined) {
  const [on, setOn] = useState(false);
  const [next, setNext] = useState('');
  const [fields, setFields] = useState('{}');
  const [calls, setCalls] = useState('[]');
  useEffect(() => {
    if (!data?.answer) return;
    setNext(data.answer.next ?? data.answer.edges[0]!);
    // Outputs taken from a tool's result are not the model's to pin.
    const own = Object.entries(data.answer.fields ?? {}).filter(([k]) => !data.answer!.outputs[k]?.from);
    setFields(JSON.stringify(Object.fromEntries(own), null, 2));
  }, [data]);
  const [f, c] = [parse(fields), parse(calls)];
  const problem = !on ? undefined : (f.error ?? c.error);
  const pinned = on && !problem ? { next, fields: f.value, toolCalls: c.value } : undefined;
  return { on, setOn, next, setNext, fields, setFields, calls, setCalls, problem, pinned };
}

/** The checkbox that turns a fieldset's edit on, labelled by `children`. */
function EditCheckbox({
  state,
  children,
}: {
  state: { on: boolean; setOn: (on: boolean) => void };
  children: ComponentChildren;
}) {
  return (
    <label>
      <input type="checkbox" checked={state.on} onChange={(e) => state.setOn((e.target as HTMLInputElement).checked)} />{' '}
      {children}
    </label>
  );
}

function AnswerFields({ step, edges, state }: { step: string; edges: string[]; state: ReturnType<typeof useAnswer> }) {
  return (
    <fieldset>
      <legend>The model's answer at {step}</legend>
      <EditCheckbox state={state}>
        Pin the model's answer (no model is asked at {step}; the route is still checked against its edges)
      </EditCheckbox>
      {state.on && (
        <>
          <label>
            Route
            <select value={state.next} onChange={(e) => state.setNext((e.target as HTMLSelectElement).value)}>
              {edges.map((edge) => (
                <option key={edge} value={edge}>
                  {edge}
                </option>
              ))}
            </select>
          </label>
          {[
            { id: 'fork-answer-fields', label: 'Its outputs', rows: 5, value: state.fields, onInput: state.setFields },
            {
              id: 'fork-answer-calls',
              label: 'Tool calls it asks for first: [{ "tool": "...", "args": {} }]',
              rows: 3,
              value: state.calls,
              onInput: state.setCalls,
            },
          ].map((field) => (
            <JsonField key={field.id} {...field} check={jsonCheck(state.problem)} />
          ))}
        </>
      )}
    </fieldset>
  );
}

/** The email to edit at an email workflow's first step: only what changed is sent. */
function useEmailEdit(data: ForkForm | undefined) {
  const [on, setOn] = useState(false);
  const [values, setValues] = useState<Record<string, string>>({});
  useEffect(() => {
    if (data?.email) setValues({ ...data.email, body: data.email.body ?? '' });
  }, [data]);
  const changed = Object.entries(values).filter(
    ([k, v]) => v !== ((data?.email as Record<string, string> | undefined)?.[k] ?? ''),
  );
  const edits = on && changed.length ? Object.fromEntries(changed) : undefined;
  return {
    on,
    setOn,
    values,
    set: (k: string, v: string) => setValues({ ...values, [k]: v }),
    recorded: data?.email?.body !== undefined,
    edits,
  };
}

function EmailFields({ state }: { state: ReturnType<typeof useEmailEdit> }) {
  return (
    <fieldset>
      <legend>The email</legend>
      <EditCheckbox state={state}>Edit the email itself (it runs through the ingress again as a new mail)</EditCheckbox>
      {state.on &&
        (['subject', 'from', 'fromName', 'body'] as const).map((key) => (
          <p key={key}>
            <label for={`fork-email-${key}`}>{key === 'fromName' ? 'Sender name' : key}</label>
            {key === 'body' ? (
              <textarea
                id={`fork-email-${key}`}
                rows={8}
                value={state.values[key] ?? ''}
                onInput={(e) => state.set(key, (e.target as HTMLTextAreaElement).value)}
              />
            ) : (
              <input
                id={`fork-email-${key}`}
                value={state.values[key] ?? ''}
                onInput={(e) => state.set(key, (e.target as HTMLInputElement).value)}
              />
            )}
          </p>
        ))}
      {state.on && !state.recorded && <p class="muted">The body was not recorded: it cannot be edited.</p>}
    </fieldset>
  );
}

function ForkIntro({ execution, point }: { execution: string; point: ForkForm['point'] }) {
  return (
    <p>
      A new local execution runs the same compiled state machine from <strong>{point.entryState}</strong> (step{' '}
      {point.index + 1}), with the step input below. Everything before it is kept from{' '}
      <a href={`#/executions/${encodeURIComponent(execution)}`}>{execution}</a>, and the fork is linked to it.
    </p>
  );
}
