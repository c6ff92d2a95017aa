import { useState } from 'preact/hooks';
import { Problem } from '../common.tsx';
import { useStart } from '../hooks.ts';

/** Run a mail or an input of one's own: an uploaded `.eml` goes through the email ingress, pasted JSON starts directly. */
export function RunOwn({ workflow }: { workflow: string }) {
  const [eml, setEml] = useState<{ name: string; text: string }>();
  const [json, setJson] = useState('');
  const [problem, setProblem] = useState<string>();
  const { busy, problem: runError, start } = useStart();
  const upload = async (e: Event) => {
    const file = (e.target as HTMLInputElement).files?.[0];
    setProblem(undefined);
    setEml(file ? { name: file.name, text: await file.text() } : undefined);
  };
  const submit = (e: Event) => {
    e.preventDefault();
    if (eml) return void start('runs', { workflow, eml: eml.text });
    try {
      void start('runs', { workflow, input: JSON.parse(json) });
    } catch (err) {
      setProblem(`the input is not JSON: ${(err as Error).message}`);
    }
  };
  return (
    <form onSubmit={submit} class="run-own" aria-labelledby="run-own-h">
      <h3 id="run-own-h">Run your own</h3>
      <label>
        Upload an .eml (it goes through the email ingress, as SES would deliver it)
        <input type="file" accept=".eml,message/rfc822" onChange={(e) => void upload(e)} />
      </label>
      <label for="run-own-json">or paste the input JSON (checked against the workflow's input schema)</label>
      <textarea
        id="run-own-json"
        rows={5}
        spellcheck={false}
        value={json}
        disabled={eml !== undefined}
        onInput={(e) => setJson((e.target as HTMLTextAreaElement).value)}
      />
      <Problem message={problem ?? runError} />
      <button type="submit" disabled={busy || (!eml && !json.trim())}>
        {busy ? 'Starting…' : eml ? `Run ${eml.name}` : 'Run the pasted input'}
      </button>
    </form>
  );
}
