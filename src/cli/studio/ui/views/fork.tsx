import { useEffect, useState } from 'preact/hooks';
import { path, post } from '../api.ts';
import { Loading, Problem } from '../common.tsx';
import { useData, useStart } from '../hooks.ts';
import type { PromptVersion } from '../../../../local/prompt-versions.ts';

interface ForkForm {
  execution: string;
  point: { index: number; step: string; entryState: string };
  kind: string;
  stepInput: Record<string, unknown>;
  toolResults: Record<string, Record<string, unknown>>;
  prompts: PromptVersion[];
  models: string[];
}

interface Problem {
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

/** Re-run an execution from one step: the step input at that step (checked against the step's input schema as you type), pinned tool results, the model and the prompt version. */
export function Fork({ execution, from }: { execution: string; from: string }) {
  const { data, error } = useData<ForkForm>(`${path('executions', execution, 'fork')}?from=${encodeURIComponent(from)}`);
  const [input, setInput] = useState('');
  const [tools, setTools] = useState('');
  const [model, setModel] = useState('offline');
  const [prompt, setPrompt] = useState('current');
  const [problems, setProblems] = useState<Problem[]>([]);
  const [toolProblem, setToolProblem] = useState<string>();
  const { busy, problem: submitError, start } = useStart();
  useEffect(() => {
    if (!data) return;
    setInput(JSON.stringify(data.stepInput, null, 2));
    setTools(JSON.stringify(data.toolResults, null, 2));
  }, [data]);
  // Checked against the step's input schema on the server (the one the step handler uses), a moment after each edit.
  useEffect(() => {
    if (!data || !input) return;
    const parsed = parse(input);
    if (parsed.error) return setProblems([{ path: '(root)', message: parsed.error }]);
    const timer = setTimeout(() => {
      post<{ problems: Problem[] }>(`${path('executions', execution, 'fork', 'check')}`, { from: data.point.index, stepInput: parsed.value }).then(
        (r) => setProblems(r.problems),
        (e: Error) => setProblems([{ path: '(root)', message: e.message }]),
      );
    }, 250);
    return () => clearTimeout(timer);
  }, [input, data]);
  useEffect(() => {
    const parsed = parse(tools || '{}');
    setToolProblem(parsed.error ?? (parsed.value && typeof parsed.value === 'object' && !Array.isArray(parsed.value) ? undefined : 'tool results must be a JSON object: { "tool": { ...result } }'));
  }, [tools]);
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
  return (
    <>
      <h1>
        Fork {execution} from {data.point.step}
      </h1>
      <p>
        A new local execution runs the same compiled state machine from <strong>{data.point.entryState}</strong> (step {data.point.index + 1}), with the step input below. Everything before it is kept
        from <a href={`#/executions/${encodeURIComponent(execution)}`}>{execution}</a>, and the fork is linked to it.
      </p>
      <form onSubmit={submit} class="fork">
        <label for="fork-input">Step input of {data.point.step} (its input, previous result, error): checked against the step's input schema</label>
        <textarea id="fork-input" rows={18} spellcheck={false} value={input} onInput={(e) => setInput((e.target as HTMLTextAreaElement).value)} aria-describedby="fork-input-check" aria-invalid={problems.length > 0} />
        <div id="fork-input-check" aria-live="polite" class={problems.length ? 'problem' : 'ok'}>
          {problems.length ? problems.map((p) => <div key={p.path + p.message}>{`${p.path}: ${p.message}`}</div>) : 'Matches the step input schema.'}
        </div>
        <label for="fork-tools">Tool results of {data.point.step} (answered instead of running the tool; remove one to run it for real)</label>
        <textarea id="fork-tools" rows={8} spellcheck={false} value={tools} onInput={(e) => setTools((e.target as HTMLTextAreaElement).value)} aria-describedby="fork-tools-check" aria-invalid={toolProblem !== undefined} />
        <div id="fork-tools-check" aria-live="polite" class={toolProblem ? 'problem' : 'ok'}>
          {toolProblem ?? 'Valid JSON.'}
        </div>
        <div class="row">
          <label>
            Model provider
            <select value={model} onChange={(e) => setModel((e.target as HTMLSelectElement).value)}>
              {data.models.map((m) => (
                <option key={m} value={m}>
                  {m === 'offline' ? 'offline stand-in (not an LLM)' : 'Bedrock (needs AWS credentials)'}
                </option>
              ))}
            </select>
          </label>
          {data.kind === 'llm' && (
            <label>
              Prompt version of {data.point.step}
              <select value={prompt} onChange={(e) => setPrompt((e.target as HTMLSelectElement).value)}>
                {data.prompts.map((p) => (
                  <option key={p.ref} value={p.ref}>
                    {p.ref === 'current' ? `v${p.version} (current)` : `v${p.version}, ${p.ref.slice(0, 8)} ${p.date?.slice(0, 10) ?? ''} ${p.subject ?? ''}`}
                  </option>
                ))}
              </select>
            </label>
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
