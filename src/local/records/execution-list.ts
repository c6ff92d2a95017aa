/**
 * The executions list of Studio and `stepwise executions --all`: every stored execution (local,
 * imported) and every refused inbound mail, each with what it was about (the fields its workflow
 * declares in `summary.identify`, an email's subject and sender by default) and how it ended (a
 * declared output such as `ticketId`, else the last step before the end), searchable over its
 * input, outputs and replies and filtered by step visited, outcome, error and time. Records are
 * read without blocking, regular files only, and kept by modification stamp: a list over thousands
 * of executions reads only what changed since the last one.
 */
import { lstatSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import * as z from 'zod';
import { lookup } from '../../core/template.ts';
import { isEmailWorkflow } from '../../definitions/workflow/input.ts';
import type { WorkflowDefinition } from '../../definitions/workflow/schema.ts';
import {
  type ExecutionRecord,
  type ExecutionSource,
  type ForkParent,
  readRecordFileAsync,
  readStoredExecutionAsync,
  stepTrail,
} from './history.ts';
import { RefusedMailSchema } from './recorded-emails.ts';
import type { StateDirs } from './state-dirs.ts';

/** One row of the list. */
export interface ExecutionListing {
  /** `refused`: inbound mail the ingress turned away; nothing ran. */
  kind: 'execution' | 'refused';
  name: string;
  workflow?: string;
  /** The execution's status (`PAUSED` at a checkpoint), or `REFUSED`. */
  status: string;
  /** What identifies it to a person, by field (`subject`, `from`, or the declared input paths). */
  about: Record<string, string>;
  /** How it ended: a declared output (`ticketId: T-1`), the last step before the end, or the error. */
  outcome?: string;
  /** The terminal state it ended in (`Done`). */
  ended?: string;
  /** The error it failed with, or the reason code of a refusal. */
  error?: string;
  /** The steps it ran, in order (a step run twice is named twice). */
  visited: string[];
  startDate: string;
  stopDate?: string;
  durationMs?: number;
  source: ExecutionSource;
  parent?: ForkParent;
  paused?: boolean;
  /** A refusal: the ingress's detail. */
  detail?: string;
}

/** The query of a list: text search, filters and the order. */
export const ListQuerySchema = z.object({
  q: z.string().max(500).optional(),
  workflow: z.string().optional(),
  status: z.string().optional(),
  outcome: z.string().optional(),
  step: z.string().optional(),
  /** `any` for every failure, else an error name. */
  error: z.string().optional(),
  kind: z.enum(['execution', 'refused']).optional(),
  source: z.enum(['local', 'imported']).optional(),
  since: z.iso.datetime({ offset: true }).optional(),
  until: z.iso.datetime({ offset: true }).optional(),
  sort: z.enum(['started', 'duration', 'steps', 'name', 'outcome']).default('started'),
  order: z.enum(['asc', 'desc']).default('desc'),
  limit: z.coerce.number().int().min(1).max(10_000).default(200),
});
export type ListQuery = z.input<typeof ListQuerySchema>;

/** A list: the rows that match (at most `limit`), how many matched, and the values the filters offer. */
export interface ExecutionList {
  executions: ExecutionListing[];
  total: number;
  unreadable: number;
  workflows: string[];
  statuses: string[];
  outcomes: string[];
  steps: string[];
  errors: string[];
}

/** The longest text of one execution that search reads: inputs, outputs and replies are short; a transcript is not read. */
const MAX_SEARCH_CHARS = 20_000;

const text = (value: unknown): string =>
  value === undefined || value === null ? '' : typeof value === 'string' ? value : JSON.stringify(value);

/** The input fields that identify an execution: declared, an email's subject and sender, else the first three fields. */
export function aboutOf(input: unknown, def: WorkflowDefinition | undefined): Record<string, string> {
  const declared = def?.manifest.summary?.identify;
  const email = (input as { email?: unknown } | undefined)?.email;
  const paths =
    declared ??
    ((def && isEmailWorkflow(def)) || (email && typeof email === 'object')
      ? ['email.subject', 'email.from']
      : Object.keys(input && typeof input === 'object' ? input : {}).slice(0, 3));
  const about: Record<string, string> = {};
  for (const path of paths) {
    const value = lookup(input, path);
    if (value !== undefined && value !== null) about[path.split('.').at(-1)!] = text(value).slice(0, 200);
  }
  return about;
}

/** The outcome of an execution: its error; a declared output field set at the end; else the last step it ran. */
export function outcomeOf(record: ExecutionRecord, def: WorkflowDefinition | undefined): string | undefined {
  if (record.status !== 'SUCCEEDED') return record.error?.Error;
  const steps = new Set(def?.steps.map((s) => s.name));
  const trail = stepTrail(record.events).filter((s) => !def || steps.has(s.name));
  const data = (trail.at(-1)?.output as { data?: Record<string, unknown> } | undefined)?.data ?? {};
  for (const field of def?.manifest.summary?.outcome ?? [])
    if (data[field] !== undefined && data[field] !== null && data[field] !== '')
      return `${field}: ${text(data[field])}`;
  return trail.at(-1)?.name;
}

/** One execution as a row, and the lower-cased text search reads: its input, output, step outputs and replies. */
export function listingOf(
  record: ExecutionRecord,
  def: WorkflowDefinition | undefined,
  source: ExecutionSource,
  paused: boolean,
): { listing: ExecutionListing; search: string } {
  const steps = new Set(def?.steps.map((s) => s.name));
  const trail = stepTrail(record.events).filter((s) => !def || steps.has(s.name));
  const outcome = outcomeOf(record, def);
  const ended = record.events.findLast((e) => e.type === 'SucceedStateEntered')?.stateEnteredEventDetails?.name;
  const listing: ExecutionListing = {
    kind: 'execution',
    name: record.name,
    ...(record.workflow && { workflow: record.workflow }),
    status: paused ? 'PAUSED' : record.status,
    about: aboutOf(record.input, def),
    ...(outcome && { outcome }),
    ...(ended && { ended }),
    ...(record.error && { error: record.error.Error }),
    visited: trail.map((s) => s.name),
    startDate: record.startDate.toISOString(),
    ...(record.stopDate && {
      stopDate: record.stopDate.toISOString(),
      durationMs: record.stopDate.getTime() - record.startDate.getTime(),
    }),
    source,
    ...(record.parent && { parent: record.parent }),
    ...(paused && { paused }),
  };
  const outputs = trail.map((s) => {
    const out = s.output as { fields?: unknown; reply?: unknown; reason?: unknown; toolCalls?: unknown } | undefined;
    return [out?.fields, out?.reply, out?.reason, out?.toolCalls, s.error].map(text).join(' ');
  });
  const search = [record.name, text(record.input), text(record.output), text(record.error), ...outputs]
    .join('\n')
    .slice(0, MAX_SEARCH_CHARS)
    .toLowerCase();
  return { listing, search };
}

/** The rows that match `query`, in its order. */
export function filterListings(
  rows: readonly { listing: ExecutionListing; search: string }[],
  query: z.output<typeof ListQuerySchema>,
): ExecutionListing[] {
  const words = (query.q ?? '').toLowerCase().split(/\s+/).filter(Boolean);
  const [since, until] = [query.since && Date.parse(query.since), query.until && Date.parse(query.until)];
  const matches = ({ listing: l, search }: (typeof rows)[number]) =>
    words.every((w) => search.includes(w)) &&
    (!query.workflow || l.workflow === query.workflow) &&
    (!query.status || l.status === query.status) &&
    (!query.outcome || l.outcome === query.outcome) &&
    (!query.step || l.visited.includes(query.step)) &&
    (!query.error || (query.error === 'any' ? l.error !== undefined : l.error === query.error)) &&
    (!query.kind || l.kind === query.kind) &&
    (!query.source || l.source === query.source) &&
    (!since || Date.parse(l.startDate) >= since) &&
    (!until || Date.parse(l.startDate) <= until);
  const key: Record<typeof query.sort, (l: ExecutionListing) => string | number> = {
    started: (l) => l.startDate,
    duration: (l) => l.durationMs ?? -1,
    steps: (l) => l.visited.length,
    name: (l) => l.name,
    outcome: (l) => l.outcome ?? '',
  };
  const sign = query.order === 'asc' ? 1 : -1;
  const by = key[query.sort];
  return rows
    .filter(matches)
    .map((r) => r.listing)
    .sort((a, b) => {
      const [x, y] = [by(a), by(b)];
      return sign * (x < y ? -1 : x > y ? 1 : 0) || b.startDate.localeCompare(a.startDate);
    });
}

type Row = { listing: ExecutionListing; search: string };

/** How many files are stamped between two yields to the event loop. */
const STAT_BATCH = 500;

/**
 * The stored executions and refusals, read as they change: each file is read again only when its
 * modification time or size changed (or, for an execution, whether it is paused).
 */
export class ExecutionIndex {
  private readonly rows = new Map<string, { stamp: string; row: Row }>();

  constructor(
    private readonly dirs: Pick<StateDirs, 'executions' | 'imports' | 'refused'>,
    /** The definition of a workflow of the project, undefined for any other. */
    private readonly definition: (workflow: string) => WorkflowDefinition | undefined,
  ) {}

  /** The list for `query`; `paused` names the executions waiting at a checkpoint. */
  async list(query: ListQuery = {}, paused: ReadonlySet<string> = new Set()): Promise<ExecutionList> {
    const parsed = ListQuerySchema.parse(query);
    const { rows, unreadable } = await this.read(paused);
    const shown = filterListings(rows, parsed);
    const values = (pick: (l: ExecutionListing) => (string | undefined)[]) =>
      [...new Set(rows.flatMap((r) => pick(r.listing)).filter((v): v is string => Boolean(v)))].sort();
    return {
      executions: shown.slice(0, parsed.limit),
      total: shown.length,
      unreadable,
      workflows: values((l) => [l.workflow]),
      statuses: values((l) => [l.status]),
      outcomes: values((l) => [l.outcome]),
      steps: values((l) => l.visited),
      errors: values((l) => [l.error]),
    };
  }

  private async read(paused: ReadonlySet<string>): Promise<{ rows: Row[]; unreadable: number }> {
    const folders = [
      ['local', this.dirs.executions],
      ['imported', this.dirs.imports],
      ['refused', this.dirs.refused],
    ] as const;
    const seen = new Set<string>();
    let unreadable = 0;
    const rows: Row[] = [];
    const stale: Promise<void>[] = [];
    for (const [source, dir] of folders) {
      const files = (await readdir(dir).catch(() => [] as string[])).filter((f) => f.endsWith('.json'));
      for (const [i, file] of files.entries()) {
        // Thousands of async lstats cost more in promises and thread-pool hops than the calls themselves:
        // synchronous ones (an lstat never opens the file, so a FIFO cannot block it), in batches between
        // which the server answers other requests, take about a third of the time.
        if (i % STAT_BATCH === STAT_BATCH - 1) await new Promise(setImmediate);
        const path = join(dir, file);
        seen.add(path);
        const stat = lstatSync(path, { throwIfNoEntry: false });
        if (!stat) continue;
        if (!stat.isFile()) {
          unreadable++;
          continue;
        }
        const name = file.slice(0, -'.json'.length);
        const stamp = `${stat.mtimeMs}|${stat.size}|${source !== 'refused' && paused.has(name)}`;
        const cached = this.rows.get(path);
        if (cached?.stamp === stamp) {
          rows.push(cached.row);
          continue;
        }
        stale.push(
          this.row(source, path, name, paused).then(
            (row) => {
              if (!row) return;
              this.rows.set(path, { stamp, row });
              rows.push(row);
            },
            () => {
              unreadable++;
            },
          ),
        );
      }
    }
    await Promise.all(stale);
    for (const path of this.rows.keys()) if (!seen.has(path)) this.rows.delete(path);
    return { rows, unreadable };
  }

  /** One file, changed since it was last read, as a row; undefined when it went away meanwhile. */
  private async row(
    source: ExecutionSource | 'refused',
    path: string,
    name: string,
    paused: ReadonlySet<string>,
  ): Promise<Row | undefined> {
    if (source === 'refused') {
      const refused = await readRecordFileAsync(path, RefusedMailSchema);
      return refused && refusalRow(refused);
    }
    const { record } = await readStoredExecutionAsync(name, this.dirs, source);
    return listingOf(record, record.workflow ? this.definition(record.workflow) : undefined, source, paused.has(name));
  }
}

/** A refused mail as a row: nothing ran, the reason is its outcome. */
function refusalRow(refused: z.output<typeof RefusedMailSchema>): Row {
  const listing: ExecutionListing = {
    kind: 'refused',
    name: refused.name,
    workflow: refused.workflow,
    status: 'REFUSED',
    about: refused.from ? { from: refused.from } : {},
    outcome: `refused: ${refused.reason}`,
    error: refused.reason,
    detail: refused.detail,
    visited: [],
    startDate: new Date(refused.at).toISOString(),
    source: 'local',
  };
  const search = [refused.name, refused.from, refused.reason, refused.detail].join('\n').toLowerCase();
  return { listing, search };
}
