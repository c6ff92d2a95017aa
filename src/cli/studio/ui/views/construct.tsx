/**
 * What a construct step ran, on the execution page: a map step's items and a parallel step's
 * branches (each expandable to its steps and result, a failed one with its error), a workflow
 * step's child execution, a wait's deadline, an event step's awaited event and how it ended.
 */
import type { ConstructView, InnerRun } from '../../construct-views.ts';
import type { StepView } from '../../views.ts';
import { Json, when } from '../common.tsx';

export const executionLink = (name: string) => `#/executions/${encodeURIComponent(name)}`;
const stepLink = (execution: string, index: number) => `${executionLink(execution)}?step=${index}`;

/** A duration in seconds as people say it: `3 days`, `90 s`. */
function duration(seconds: number): string {
  const units: [number, string][] = [
    [86_400, 'day'],
    [3_600, 'hour'],
    [60, 'minute'],
  ];
  const [size, unit] = units.find(([size]) => seconds >= size && seconds % size === 0) ?? [1, 'second'];
  const n = seconds / size;
  return `${n} ${unit}${n === 1 ? '' : 's'}`;
}

const statusMark = (status: InnerRun['status']) => (status === 'succeeded' ? '✓' : status === 'failed' ? '✗' : '…');

/** What the construct did, in a few words: the step list shows it beside the step. */
export function constructSummary(c: ConstructView): string {
  switch (c.kind) {
    case 'map': {
      const failed = c.items.filter((i) => i.status === 'failed').length;
      return `${c.items.length} items${failed ? `, ${failed} failed` : ''}`;
    }
    case 'parallel':
      return c.branches.map((b) => `${b.name} ${statusMark(b.status)}`).join(', ');
    case 'workflow':
      return c.child ? `child ${c.workflow}${c.child.status ? ` ${c.child.status.toLowerCase()}` : ''}` : c.workflow;
    case 'wait':
      return c.crossed ? 'deadline crossed' : 'waiting';
    case 'event':
      return c.outcome === 'resumed' ? 'resumed by an event' : c.outcome;
  }
}

/** What a construct step ran, under a heading for its kind. */
export function ConstructDetails({
  execution,
  construct: c,
  steps,
}: {
  execution: string;
  construct: ConstructView;
  steps: StepView[];
}) {
  return (
    <section aria-labelledby="construct-h" class="construct" data-testid={`construct-${c.kind}`}>
      <h4 id="construct-h">{HEADINGS[c.kind]}</h4>
      {c.kind === 'map' && <MapItems map={c} execution={execution} steps={steps} />}
      {c.kind === 'parallel' && (
        <ul class="inner-runs">
          {c.branches.map((b) => (
            <InnerRunItem key={b.name} title={`Branch ${b.name}`} run={b} execution={execution} steps={steps} />
          ))}
        </ul>
      )}
      {c.kind === 'workflow' && <ChildExecution workflow={c} />}
      {c.kind === 'wait' && <WaitDeadline wait={c} />}
      {c.kind === 'event' && <AwaitedEvent event={c} />}
    </section>
  );
}

/** The view of one kind of construct step. */
type Construct<K extends ConstructView['kind']> = Extract<ConstructView, { kind: K }>;

/** A map step's items, and where their results went. */
function MapItems({ map, execution, steps }: { map: Construct<'map'>; execution: string; steps: StepView[] }) {
  return (
    <>
      <p class="muted">
        {constructSummary(map)}; their results, in item order, are <code>data.{map.output}</code>.
      </p>
      <ul class="inner-runs">
        {map.items.map((item) => (
          <InnerRunItem key={item.index} title={`Item ${item.index}`} run={item} execution={execution} steps={steps} />
        ))}
      </ul>
    </>
  );
}

/** The workflow a workflow step runs, and the child execution it started. */
function ChildExecution({ workflow: c }: { workflow: Construct<'workflow'> }) {
  return (
    <p data-testid="child-execution">
      Runs workflow{' '}
      <a href={`#/workflows/${encodeURIComponent(c.workflow)}`}>
        <code>{c.workflow}</code>
      </a>
      {c.child ? (
        <>
          {' '}
          as child execution <a href={executionLink(c.child.execution)}>{c.child.execution}</a>
          {c.child.status && ` (${c.child.status.toLowerCase()})`}.
        </>
      ) : (
        ': no child execution started yet.'
      )}
    </p>
  );
}

/** How long a wait step waits, until when, and whether that time has come. */
function WaitDeadline({ wait: c }: { wait: Construct<'wait'> }) {
  return (
    <dl class="facts-list" data-testid="wait-deadline">
      <dt>Waits</dt>
      <dd>{c.seconds !== undefined ? `${duration(c.seconds)} (${c.seconds} s)` : <>until the time at {c.until}</>}</dd>
      <dt>Deadline</dt>
      <dd>{c.deadline ? `${when(c.deadline)} UTC` : 'unknown (no readable timestamp)'}</dd>
      <dt>Crossed</dt>
      <dd>{c.crossed ? 'yes: the wait ended and the workflow went on' : 'not yet'}</dd>
    </dl>
  );
}

/** The event an event step awaits, by which key, until when, and how the wait ended. */
function AwaitedEvent({ event: c }: { event: Construct<'event'> }) {
  return (
    <>
      <dl class="facts-list" data-testid="event-wait">
        <dt>Awaits</dt>
        <dd>
          <code>{c.detailType}</code> from <code>{c.source}</code>
        </dd>
        <dt>Key</dt>
        <dd>
          {c.key}
          {c.keyValue !== undefined && (
            <>
              {' '}
              = <code>{JSON.stringify(c.keyValue)}</code>
            </>
          )}
        </dd>
        <dt>Deadline</dt>
        <dd>
          {duration(c.timeoutSeconds)}
          {c.deadline && `, at ${when(c.deadline)} UTC`}
          {c.onTimeout && `; then ${c.onTimeout}`}
        </dd>
        <dt>Outcome</dt>
        <dd data-testid="event-outcome" class={c.outcome === 'failed' ? 'problem-text' : ''}>
          {OUTCOMES[c.outcome]}
          {c.error && `: ${c.error.error}: ${c.error.message}`}
        </dd>
      </dl>
      {c.detail !== undefined && <Json value={c.detail} label="The detail of the event that resumed it" />}
    </>
  );
}

const HEADINGS: Record<ConstructView['kind'], string> = {
  map: 'Items',
  parallel: 'Branches',
  workflow: 'Child execution',
  wait: 'Wait',
  event: 'Awaited event',
};

const OUTCOMES: Record<Construct<'event'>['outcome'], string> = {
  waiting: 'waiting for the event',
  resumed: 'resumed by an event',
  'timed out': 'timed out: no matching event before the deadline',
  failed: 'failed',
};

/** One item or branch: its status in the summary; its steps, result or error when opened. */
function InnerRunItem({
  title,
  run,
  execution,
  steps,
}: {
  title: string;
  run: InnerRun;
  execution: string;
  steps: StepView[];
}) {
  return (
    <li class={`inner-run inner-${run.status}`}>
      <details open={run.status === 'failed'}>
        <summary>
          {title} {statusMark(run.status)} {run.status}
          {run.error && `: ${run.error.error}: ${run.error.message}`}
          {run.step && ` (ended at ${run.step})`}
        </summary>
        {run.steps.length > 0 && (
          <p>
            Steps:{' '}
            {run.steps.map((i, k) => (
              <span key={i}>
                {k > 0 && ' → '}
                <a href={stepLink(execution, i)}>{steps[i]?.name ?? `step ${i + 1}`}</a>
              </span>
            ))}
          </p>
        )}
        {run.fields && <Json value={run.fields} label={`${title}: its result`} />}
      </details>
    </li>
  );
}
