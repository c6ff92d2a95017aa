import { useState } from 'preact/hooks';
import { Json, Loading, Problem } from '../common.tsx';
import { useData } from '../hooks.ts';

interface EventsProps {
  execution: string;
  title: string;
  label: string;
  /** The ids of the first and last event shown; all of them without it. */
  range?: [number, number];
  class?: string;
}

/** History events, fetched when the section is opened (they repeat every input and output). */
export function Events({ execution, title, label, range, class: className }: EventsProps) {
  const [open, setOpen] = useState(false);
  const url = open ? `executions/${encodeURIComponent(execution)}/events` : null;
  const { data, error } = useData<{ id?: number }[]>(url);
  const shown = data && (range ? data.filter((e) => e.id! >= range[0] && e.id! <= range[1]) : data);
  return (
    <details class={className} onToggle={(e) => setOpen((e.target as HTMLDetailsElement).open)}>
      <summary>{title}</summary>
      {open &&
        (shown ? (
          <Json value={shown} label={label} />
        ) : error ? (
          <Problem message={error} />
        ) : (
          <Loading what="the events" />
        ))}
    </details>
  );
}
