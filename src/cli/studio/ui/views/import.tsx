import { useState } from 'preact/hooks';
import { Problem } from '../common.tsx';
import { useStart } from '../hooks.ts';

/** Open a deployed execution: the JSON of `aws stepfunctions get-execution-history`, with its execution ARN. */
export function Import({ aws }: { aws: boolean }) {
  const [text, setText] = useState('');
  const [arn, setArn] = useState('');
  const { busy, problem, setProblem, start } = useStart();
  const open = (body: unknown, path: string) => start(path, body);
  const importFile = (e: Event) => {
    e.preventDefault();
    let history: unknown;
    try {
      history = JSON.parse(text);
    } catch (err) {
      return setProblem(`the history is not JSON: ${(err as Error).message}`);
    }
    void open({ history, ...(arn.trim() && { executionArn: arn.trim() }) }, 'imports');
  };
  const readFile = async (e: Event) => {
    const file = (e.target as HTMLInputElement).files?.[0];
    if (file) setText(await file.text());
  };
  return (
    <>
      <h1>Import a deployed execution</h1>
      <p>
        Save the history with <code>aws stepfunctions get-execution-history --execution-arn ARN &gt; history.json</code>
        , then open it here: it shows like a local execution and can be forked locally.
      </p>
      <form onSubmit={importFile} class="import">
        <label for="import-file">History file (GetExecutionHistory JSON)</label>
        <input id="import-file" type="file" accept=".json,application/json" onChange={readFile} />
        <label for="import-text">or paste it</label>
        <textarea
          id="import-text"
          rows={8}
          spellcheck={false}
          value={text}
          onInput={(e) => setText((e.target as HTMLTextAreaElement).value)}
        />
        <label for="import-arn">Execution ARN (the history does not carry it)</label>
        <input
          id="import-arn"
          value={arn}
          onInput={(e) => setArn((e.target as HTMLInputElement).value)}
          placeholder="arn:aws:states:REGION:ACCOUNT:execution:STATE_MACHINE:NAME"
        />
        <button type="submit" disabled={busy || !text}>
          Import and open
        </button>
      </form>
      {aws && (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            void open({ executionArn: arn.trim() }, 'aws/imports');
          }}
        >
          <p>
            With <code>--aws</code>: read it by ARN instead (above), or pick one under <a href="#/deployed">Deployed</a>
            .
          </p>
          <button type="submit" disabled={busy || !arn.trim().startsWith('arn:')}>
            Read {arn.trim() ? 'this ARN' : 'an ARN'} from AWS
          </button>
        </form>
      )}
      <Problem message={problem} />
    </>
  );
}
