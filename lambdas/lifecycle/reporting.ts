/**
 * Reports over the immutable event log (the seed's reporting table). Pure functions over
 * `LoggedEvent`s of any number of leads, in any order: each lead's events are read in `seq` order.
 */
import type { LoggedEvent } from './schema.ts';

/** Each lead's events in log order, leads sorted by id (so every per-lead record is deterministic). */
function byLead(events: readonly LoggedEvent[]): Map<string, LoggedEvent[]> {
  const leads = new Map<string, LoggedEvent[]>();
  for (const e of [...events].sort((a, b) => (a.leadId < b.leadId ? -1 : a.leadId > b.leadId ? 1 : a.seq - b.seq))) {
    const log = leads.get(e.leadId);
    if (log) log.push(e);
    else leads.set(e.leadId, [e]);
  }
  return leads;
}

function count(events: readonly LoggedEvent[], type: string): number {
  return events.filter((e) => e.type === type).length;
}

/** How many meetings each lead booked (`meeting.booked` events, over every conversation); 0 for leads that booked none. */
export function meetingsBookedPerLead(events: readonly LoggedEvent[]): Record<string, number> {
  return Object.fromEntries([...byLead(events)].map(([lead, log]) => [lead, count(log, 'meeting.booked')]));
}

/** `meeting.missed` / `meeting.booked` over all leads; `null` when no meeting was booked. */
export function noShowRate(events: readonly LoggedEvent[]): number | null {
  const booked = count(events, 'meeting.booked');
  return booked === 0 ? null : count(events, 'meeting.missed') / booked;
}

export interface TimeToMeeting {
  /** Milliseconds from a lead's first `agent.message_sent` to the first `meeting.booked` after it; leads without both are absent. */
  perLead: Record<string, number>;
  medianMs: number | null;
  meanMs: number | null;
}

function median(sorted: readonly number[]): number | null {
  if (!sorted.length) return null;
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Time from first contact to meeting, per lead, with the median and mean over the leads that have one. */
export function timeToMeeting(events: readonly LoggedEvent[]): TimeToMeeting {
  const perLead: Record<string, number> = {};
  for (const [lead, log] of byLead(events)) {
    const first = log.findIndex((e) => e.type === 'agent.message_sent');
    const booked = first < 0 ? undefined : log.slice(first + 1).find((e) => e.type === 'meeting.booked');
    if (booked) perLead[lead] = Date.parse(booked.time) - Date.parse(log[first]!.time);
  }
  const values = Object.values(perLead).sort((a, b) => a - b);
  return {
    perLead,
    medianMs: median(values),
    meanMs: values.length ? values.reduce((a, b) => a + b, 0) / values.length : null,
  };
}

/** Leads that re-engaged after going cold: a `lead.message_sent` logged while the lead was `cold`. Sorted. */
export function reengagedAfterCold(events: readonly LoggedEvent[]): string[] {
  return [...new Set(events.filter((e) => e.type === 'lead.message_sent' && e.stateBefore === 'cold').map((e) => e.leadId))].sort();
}

export interface Report {
  leads: number;
  events: number;
  meetingsBooked: { total: number; perLead: Record<string, number> };
  noShow: { booked: number; missed: number; rate: number | null };
  timeToMeeting: TimeToMeeting;
  reengagedAfterCold: string[];
}

/**
 * Every report of the seed's table, over one set of logged events.
 *
 * @example
 * buildReport(events).noShow // { booked: 4, missed: 1, rate: 0.25 }
 */
export function buildReport(events: readonly LoggedEvent[]): Report {
  const perLead = meetingsBookedPerLead(events);
  const booked = count(events, 'meeting.booked');
  return {
    leads: Object.keys(perLead).length,
    events: events.length,
    meetingsBooked: { total: booked, perLead },
    noShow: { booked, missed: count(events, 'meeting.missed'), rate: noShowRate(events) },
    timeToMeeting: timeToMeeting(events),
    reengagedAfterCold: reengagedAfterCold(events),
  };
}
