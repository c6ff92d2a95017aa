/** Stepwise Studio in the browser: a hash router over the views, the navigation, and the live stream. */
import { render } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import './styles.css';
import { connectLive, useData } from './hooks.ts';
import { Diff } from './views/diff.tsx';
import { EvalDiff, EvalRunView, Evals } from './views/evals.tsx';
import { Execution } from './views/execution.tsx';
import { Deployed, Executions } from './views/executions.tsx';
import { Fork } from './views/fork.tsx';
import { Import } from './views/import.tsx';
import { Pauses } from './views/pauses.tsx';
import { type Overview, Workflow, Workflows } from './views/workflows.tsx';

/** `#/a/b?x=1` → segments and query. */
function parseHash(hash: string): { segments: string[]; query: URLSearchParams } {
  const [pathPart = '', queryPart = ''] = hash.replace(/^#\/?/, '').split('?');
  return {
    segments: pathPart.split('/').filter(Boolean).map(decodeURIComponent),
    query: new URLSearchParams(queryPart),
  };
}

function useHash(): string {
  const [hash, setHash] = useState(location.hash);
  useEffect(() => {
    const onChange = () => setHash(location.hash);
    window.addEventListener('hashchange', onChange);
    // A hash that changed between the first render and this subscription would otherwise go unseen.
    onChange();
    return () => window.removeEventListener('hashchange', onChange);
  }, []);
  return hash;
}

function View({ segments, query, aws }: { segments: string[]; query: URLSearchParams; aws: boolean }) {
  const [head, a, b, c, d] = segments;
  if (!head || head === 'workflows') return a ? <Workflow name={a} /> : <Workflows />;
  if (head === 'executions' && a && b === 'fork' && c !== undefined) return <Fork execution={a} from={c} />;
  if (head === 'executions' && a) return <Execution name={a} query={query} />;
  if (head === 'executions') return <Executions query={query} />;
  if (head === 'deployed') return <Deployed />;
  if (head === 'diff' && a && b) return <Diff a={a} b={b} />;
  if (head === 'pauses') return <Pauses />;
  if (head === 'evals' && a && b === 'diff' && c && d) return <EvalDiff workflow={a} a={c} b={d} />;
  if (head === 'evals' && a && b) return <EvalRunView workflow={a} id={b} />;
  if (head === 'evals') return <Evals />;
  if (head === 'import') return <Import aws={aws} />;
  return (
    <>
      <h1>Not found</h1>
      <p>
        No view at {location.hash}. <a href="#/">Go to the workflows.</a>
      </p>
    </>
  );
}

const NAV = [
  ['workflows', 'Workflows'],
  ['executions', 'Executions'],
  ['pauses', 'Pauses'],
  ['evals', 'Evals'],
  ['import', 'Import'],
] as const;

function App() {
  const hash = useHash();
  const { segments, query } = parseHash(hash);
  const overview = useData<Overview>('overview');
  const main = useRef<HTMLElement>(null);
  const current = segments[0] ?? 'workflows';
  // A new view moves the focus to its content, as a page load would (screen readers announce it).
  useEffect(() => {
    main.current?.focus({ preventScroll: false });
  }, [segments.slice(0, 2).join('/')]);
  const nav = overview.data?.aws ? [...NAV, ['deployed', 'Deployed'] as const] : NAV;
  return (
    <>
      <a class="skip" href="#main" onClick={(e) => (e.preventDefault(), main.current?.focus())}>
        Skip to the content
      </a>
      <header>
        <p class="brand">Stepwise Studio</p>
        <nav aria-label="Studio">
          <ul>
            {nav.map(([key, label]) => (
              <li key={key}>
                <a href={`#/${key}`} aria-current={current === key ? 'page' : undefined}>
                  {label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <p class="project muted">{overview.data?.project}</p>
      </header>
      <main id="main" ref={main} tabIndex={-1}>
        <View segments={segments} query={query} aws={Boolean(overview.data?.aws)} />
      </main>
    </>
  );
}

connectLive();
const root = document.getElementById('app')!;
// The page's "Loading" line is replaced, not kept under every view.
root.replaceChildren();
render(<App />, root);
