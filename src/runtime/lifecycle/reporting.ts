/**
 * Reports over the immutable event log, as a statechart declares them under `reports`. Pure
 * functions over `LoggedEvent`s of any number of entities, in any order: each entity's events are
 * read in `seq` order.
 */
import type { AgentConfig } from '../../definitions/lifecycle/agent-config.ts';
import {
  GOAL_HIT,
  type LifecycleDefinition,
  type LoggedEvent,
  type ReportFile,
} from '../../definitions/lifecycle/schema.ts';

/** Each entity's events in log order, entities sorted by id (so every per-entity record is deterministic). */
function byEntity(events: readonly LoggedEvent[]): Map<string, LoggedEvent[]> {
  const entities = new Map<string, LoggedEvent[]>();
  for (const e of [...events].sort((a, b) =>
    a.entityId < b.entityId ? -1 : a.entityId > b.entityId ? 1 : a.seq - b.seq,
  )) {
    const log = entities.get(e.entityId);
    if (log) log.push(e);
    else entities.set(e.entityId, [e]);
  }
  return entities;
}

function count(events: readonly LoggedEvent[], type: string): number {
  return events.filter((e) => e.type === type).length;
}

/** `{ count }`: events of a type in total and per entity (0 for an entity that logged none). */
export interface CountReport {
  total: number;
  perEntity: Record<string, number>;
}

export function countPerEntity(events: readonly LoggedEvent[], type: string): CountReport {
  const perEntity = Object.fromEntries([...byEntity(events)].map(([entity, log]) => [entity, count(log, type)]));
  return { total: count(events, type), perEntity };
}

/**
 * `{ rate, of }`: events of one type over events of another (e.g. `meeting.missed` of `meeting.booked`); `rate` is
 * `null` when there are none of the other.
 */
export interface RateReport {
  count: number;
  of: number;
  rate: number | null;
}

export function rateOf(events: readonly LoggedEvent[], type: string, of: string): RateReport {
  const n = count(events, type);
  const d = count(events, of);
  return { count: n, of: d, rate: d === 0 ? null : n / d };
}

/**
 * `{ from, to }`: milliseconds from an entity's first `from` event to its first `to` event after it; entities without
 * both are absent.
 */
export interface TimeBetweenReport {
  perEntity: Record<string, number>;
  medianMs: number | null;
  meanMs: number | null;
}

function median(sorted: readonly number[]): number | null {
  if (!sorted.length) return null;
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export function timeBetween(events: readonly LoggedEvent[], from: string, to: string): TimeBetweenReport {
  const perEntity: Record<string, number> = {};
  for (const [entity, log] of byEntity(events)) {
    const first = log.findIndex((e) => e.type === from);
    const reached = first < 0 ? undefined : log.slice(first + 1).find((e) => e.type === to);
    if (reached) perEntity[entity] = Date.parse(reached.time) - Date.parse(log[first]!.time);
  }
  const values = Object.values(perEntity).sort((a, b) => a - b);
  return {
    perEntity,
    medianMs: median(values),
    meanMs: values.length ? values.reduce((a, b) => a + b, 0) / values.length : null,
  };
}

/** `{ event, in }`: the entities that logged `type` while in `state` (e.g. re-engaged after going cold). Sorted. */
export function loggedIn(events: readonly LoggedEvent[], type: string, state: string): string[] {
  return [...new Set(events.filter((e) => e.type === type && e.stateBefore === state).map((e) => e.entityId))].sort();
}

export type DeclaredReport = CountReport | RateReport | TimeBetweenReport | string[];

/** One declared report over `events`. */
export function runReport(report: ReportFile, events: readonly LoggedEvent[]): DeclaredReport {
  if (report.count !== undefined) return countPerEntity(events, report.count);
  if (report.rate !== undefined) return rateOf(events, report.rate, report.of!);
  if (report.from !== undefined) return timeBetween(events, report.from, report.to!);
  return loggedIn(events, report.event!, report.in!);
}

export interface Report {
  /** Entities with at least one event. */
  entities: number;
  events: number;
  /** How many entities are in each leaf now (their last logged event's `stateAfter`), leaves in document order. */
  states: Record<string, number>;
  /** Every report the statechart declares, under its key. */
  reports: Record<string, DeclaredReport>;
  /** The agent's part, when the report is asked for one agent (`--agent`). */
  agent?: AgentReport;
}

/** One agent's part of a report: how many entities reached its goal, and the reports its config declares. */
export interface AgentReport {
  name: string;
  /** Entities that logged `goal.hit`, of all entities; `null` for an agent without a goal (it works entities indefinitely). */
  goal: { reached: number; of: number; rate: number | null } | null;
  reports: Record<string, DeclaredReport>;
}

/** The agent's part of the report over `events` (the log of the lifecycle that applied its config). */
export function buildAgentReport(name: string, config: AgentConfig, events: readonly LoggedEvent[]): AgentReport {
  const of = byEntity(events).size;
  const reached = new Set(events.filter((e) => e.type === GOAL_HIT).map((e) => e.entityId)).size;
  const reports = Object.entries(config.reports ?? {}).map(([key, report]) => [key, runReport(report, events)]);
  return {
    name,
    goal: config.goal === null ? null : { reached, of, rate: of === 0 ? null : reached / of },
    reports: Object.fromEntries(reports),
  };
}

/**
 * The lifecycle's report over one set of logged events: counts, where the entities are, and every
 * report the statechart declares.
 *
 * @example
 * buildReport(def, events).reports.noShow // { count: 1, of: 4, rate: 0.25 }
 */
export function buildReport(
  def: LifecycleDefinition,
  events: readonly LoggedEvent[],
  agent?: { name: string; config: AgentConfig },
): Report {
  const entities = byEntity(events);
  const states = Object.fromEntries(def.leaves.map((leaf) => [leaf, 0]));
  for (const log of entities.values()) states[log.at(-1)!.stateAfter] = (states[log.at(-1)!.stateAfter] ?? 0) + 1;
  return {
    entities: entities.size,
    events: events.length,
    states: Object.fromEntries(Object.entries(states).filter(([, n]) => n > 0)),
    reports: Object.fromEntries(Object.entries(def.reports).map(([key, report]) => [key, runReport(report, events)])),
    ...(agent && { agent: buildAgentReport(agent.name, agent.config, events) }),
  };
}

const hours = (ms: number | null) => (ms === null ? 'n/a' : `${(ms / 3_600_000).toFixed(1)} h`);

/** One line per part of a report, for the CLI; `agent`: the config of `r.agent`, for its reports' labels. */
export function formatReport(def: LifecycleDefinition, r: Report, agent?: AgentConfig): string {
  const { plural } = def.entity;
  const lines = [
    `${r.entities} ${plural}, ${r.events} events`,
    `${plural} by state: ${
      Object.entries(r.states)
        .map(([state, n]) => `${state}: ${n}`)
        .join(', ') || 'none'
    }`,
  ];
  lines.push(...reportLines(def.reports, r.reports, plural));
  if (r.agent) {
    const { name, goal } = r.agent;
    const rate = goal?.rate == null ? 'n/a' : `${(goal.rate * 100).toFixed(0)}%`;
    lines.push(
      goal ? `agent ${name}: goal hit by ${goal.reached} of ${goal.of} ${plural} (${rate})` : `agent ${name}: no goal`,
    );
    lines.push(...reportLines(agent?.reports ?? {}, r.agent.reports, plural).map((l) => `  ${l}`));
  }
  return lines.join('\n');
}

/** One line per declared report. */
function reportLines(
  specs: Record<string, ReportFile>,
  values: Record<string, DeclaredReport>,
  plural: string,
): string[] {
  const lines: string[] = [];
  for (const [key, spec] of Object.entries(specs)) {
    const value = values[key]!;
    if (spec.count !== undefined) {
      const { total, perEntity } = value as CountReport;
      lines.push(
        `${spec.label}: ${total} (${
          Object.entries(perEntity)
            .map(([e, n]) => `${e}: ${n}`)
            .join(', ') || 'none'
        })`,
      );
    } else if (spec.rate !== undefined) {
      const { count: n, of, rate } = value as RateReport;
      lines.push(
        `${spec.label}: ${rate === null ? 'n/a' : `${(rate * 100).toFixed(0)}%`} (${n} ${spec.rate} of ${of} ${spec.of})`,
      );
    } else if (spec.from !== undefined) {
      const { perEntity, medianMs, meanMs } = value as TimeBetweenReport;
      lines.push(
        `${spec.label}: median ${hours(medianMs)}, mean ${hours(meanMs)} over ${Object.keys(perEntity).length} ${plural}`,
      );
    } else lines.push(`${spec.label}: ${(value as string[]).join(', ') || 'none'}`);
  }
  return lines;
}
