/**
 * Read-side queries over the event store, for the CLI and reports: a lead's status and history,
 * every lead's status, and the seed's reports over every logged event.
 */
import { buildReport, type Report } from './reporting.ts';
import type { LifecycleDefinition, LoggedEvent } from './schema.ts';
import type { LeadStore } from './store.ts';
import { leadStatus, type LeadStatus } from './transition.ts';

/** A lead as `stepwise lead show` prints it. */
export interface LeadHistory extends LeadStatus {
  leadId: string;
  /** The lead's log in `seq` order, system-raised events included. */
  events: LoggedEvent[];
}

/** A lead's status and log; `undefined` for a lead with no event. */
export async function leadHistory(store: LeadStore, def: LifecycleDefinition, leadId: string): Promise<LeadHistory | undefined> {
  const [snapshot, events] = await Promise.all([store.getLead(leadId), store.listEvents(leadId)]);
  return snapshot && { leadId, ...leadStatus(def, snapshot), events };
}

/** Every lead's status by lead id (sorted), or only those of `leadIds` that have events. */
export async function leadStatuses(store: LeadStore, def: LifecycleDefinition, leadIds?: readonly string[]): Promise<Record<string, LeadStatus>> {
  const leads = await store.listLeads();
  const wanted = leadIds && new Set(leadIds);
  return Object.fromEntries(leads.filter((l) => !wanted || wanted.has(l.leadId)).map((l) => [l.leadId, leadStatus(def, l.snapshot)]));
}

/** The seed's reports (meetings per lead, no-show rate, time to meeting, re-engaged after cold) over every lead's log. */
export async function leadsReport(store: LeadStore): Promise<Report> {
  return buildReport(await store.listAllEvents());
}
