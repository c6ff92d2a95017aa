import type { ComponentChildren } from 'preact';

/** A table's column headers. */
export function Head({ columns }: { columns: ComponentChildren[] }) {
  return (
    <thead>
      <tr>
        {columns.map((c, i) => (
          <th scope="col" key={i}>
            {c}
          </th>
        ))}
      </tr>
    </thead>
  );
}

/** A JSON value, readable, in a scrollable block. */
export function Json({ value, label }: { value: unknown; label: string }) {
  return (
    <pre class="json" tabIndex={0} aria-label={label}>
      {value === undefined ? '(none)' : JSON.stringify(value, null, 2)}
    </pre>
  );
}

export function Status({ status }: { status: string }) {
  return <span class={`status status-${status.toLowerCase()}`}>{status}</span>;
}

export function Problem({ message }: { message?: string }) {
  return message ? (
    <p class="problem" role="alert">
      {message}
    </p>
  ) : null;
}

export function Loading({ what }: { what: string }) {
  return (
    <p class="muted" role="status">
      Loading {what}…
    </p>
  );
}

/** A short date-time: `2025-03-14 09:26:53`. */
export const when = (iso?: string) => (iso ? iso.replace('T', ' ').replace(/\.\d+Z$|Z$/, '') : '');

export const ms = (n?: number) =>
  n === undefined ? '' : n < 1000 ? `${Math.round(n)} ms` : `${(n / 1000).toFixed(2)} s`;

/** What a step or state of this kind is called on the page. */
export const kindName = (kind: string) => (kind === 'llm' ? 'LLM step' : kind === 'code' ? 'code step' : kind);

export const usd = (n?: number) =>
  n === undefined ? '' : n === 0 ? '$0' : n < 0.01 ? `$${n.toFixed(6)}` : `$${n.toFixed(4)}`;

export function Section({ title, children, id }: { title: string; children: ComponentChildren; id?: string }) {
  return (
    <section aria-labelledby={id ?? undefined}>
      <h3 id={id}>{title}</h3>
      {children}
    </section>
  );
}
