import { useCallback, useEffect, useState } from 'preact/hooks';
import { get, post } from './api.ts';

/**
 * What changed on disk, as the server's live stream says: record names by kind (`executions`, `pauses`, `imports`,
 * `evals`).
 */
export type Changes = Record<string, string[]>;

const LIVE = 'stepwise-live';

/** Open the live stream once; every view listens to the `stepwise-live` window event. */
export function connectLive(): void {
  const source = new EventSource('/api/live');
  source.addEventListener('change', (e) =>
    window.dispatchEvent(new CustomEvent(LIVE, { detail: JSON.parse((e as MessageEvent).data) as Changes })),
  );
}

/** Call `onChange` whenever a record of these kinds changes (optionally only these names). */
export function useLive(kinds: string[], onChange: () => void, names?: string[]): void {
  useEffect(() => {
    const listener = (e: Event) => {
      const changes = (e as CustomEvent<Changes>).detail;
      if (kinds.some((k) => changes[k] && (!names || changes[k]!.some((n) => names.includes(n))))) onChange();
    };
    window.addEventListener(LIVE, listener);
    return () => window.removeEventListener(LIVE, listener);
  }, [kinds.join(), names?.join(), onChange]);
}

/** GET `path` (again when `path` changes, or on `reload`). */
export function useData<T>(path: string | null): { data?: T; error?: string; loading: boolean; reload: () => void } {
  const [state, setState] = useState<{ data?: T; error?: string; loading: boolean }>({ loading: true });
  const [tick, setTick] = useState(0);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  useEffect(() => {
    if (path === null) return;
    let current = true;
    setState((s) => ({ ...s, loading: true }));
    get<T>(path).then(
      (data) => current && setState({ data, loading: false }),
      (e: Error) => current && setState((s) => ({ data: s.data, error: e.message, loading: false })),
    );
    return () => {
      current = false;
    };
  }, [path, tick]);
  return { ...state, reload };
}

/** What a change that starts or opens an execution answers: its name, or the result of a run that never started. */
interface Started {
  name?: string;
  result?: { executionName: string | null; status: string; reason?: string };
}

/** Send a change (run, fork, resume, import) and open the execution it started or opened; or say why there is none. */
export function useStart(): {
  busy: boolean;
  problem?: string;
  setProblem: (problem?: string) => void;
  start: (path: string, body: unknown) => Promise<void>;
} {
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<string>();
  const start = async (path: string, body: unknown) => {
    setProblem(undefined);
    setBusy(true);
    try {
      const started = await post<Started>(path, body);
      // Refused mail has the name its execution would have had, but no execution: say why instead.
      const name = started.name ?? (started.result?.status === 'REJECTED' ? undefined : started.result?.executionName);
      if (name) location.hash = `#/executions/${encodeURIComponent(name)}`;
      else setProblem(`${started.result?.status ?? 'not started'}: ${started.result?.reason ?? ''}`);
    } catch (e) {
      setProblem((e as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return { busy, problem, setProblem, start };
}
