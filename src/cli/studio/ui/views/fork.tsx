import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import type { PromptVersion } from '../../../../local/prompt-versions.ts';
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
      stepInput,
      ...(Object.keys(results).length && { toolResults: { [data.point.step]: results } }),
      model,
      ...(prompt !== 'current' && { prompt }),
    });
  };
  const blocked = problems.length > 0 || toolProblem !== undefined || busy;
  const { step } = data.point;
  return (
    <>
      <h1>
        Fork {execution} from {step}
      </h1>
      <p>
        A new local execution runs the same compiled state machine from <strong>{data.point.entryState}</strong> (step{' '}
        {data.point.index + 1}), with the step input below. Everything before it is kept from{' '}
        <a href={`#/executions/${encodeURIComponent(execution)}`}>{execution}</a>, and the fork is linked to it.
      </p>
      <form onSubmit={submit} class="fork">
        <JsonField
          id="fork-input"
          label={<>Step input of {step} (its input, previous result, error): checked against the step's input schema</>}
          rows={18}
          value={input}
          onInput={setInput}
          invalid={problems.length > 0}
        >
          {schemaCheck(problems)}
        </JsonField>
        <JsonField
          id="fork-tools"
          label={<>Tool results of {step} (answered instead of running the tool; remove one to run it for real)</>}
          rows={8}
          value={tools}
          onInput={setTools}
          invalid={toolProblem !== undefined}
        >
          {toolProblem ?? 'Valid JSON.'}
        </JsonField>
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

const schemaCheck = (problems: InputProblem[]) =>
  problems.length
    ? problems.map((p) => <div key={p.path + p.message}>{`${p.path}: ${p.message}`}</div>)
    : 'Matches the step input schema.';

interface JsonFieldProps {
  id: string;
  label: ComponentChildren;
  rows: number;
  value: string;
  onInput: (text: string) => void;
  invalid: boolean;
  /** What checking the text found, announced as it changes. */
  children: ComponentChildren;
}

function JsonField({ id, label, rows, value, onInput, invalid, children }: JsonFieldProps) {
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
        {children}
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
