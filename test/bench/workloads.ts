/**
 * The inputs the benchmarks run on, built from the project's own samples and code so they follow
 * the project: the lead-lifecycle sample logs, the EventBridge envelopes the local bus makes of
 * them, and the warranty sample mail.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { STATEMACHINES_DIR } from '../../src/core/paths.ts';
import type { AgentConfig } from '../../src/definitions/lifecycle/agent-config.ts';
import { loadLifecycle } from '../../src/definitions/lifecycle/loader.ts';
import type {
  EntitySnapshot,
  LifecycleDefinition,
  LifecycleEvent,
  LoggedEvent,
} from '../../src/definitions/lifecycle/schema.ts';
import { LIFECYCLE_SOURCE, REPLAY_SOURCE } from '../../src/definitions/lifecycle/schema.ts';
import { type EventEnvelope, LocalEventBus } from '../../src/local/cloud/eventbridge/bus.ts';
import type { CfnTemplate } from '../../src/local/cloud/intrinsics.ts';
import { parseReplayFile, type ReplayLine } from '../../src/local/sessions/lifecycle-session.ts';
import { stateChangedType, toPutEventsEntry } from '../../src/runtime/lifecycle/envelope.ts';
import { stateChangeOf } from '../../src/runtime/lifecycle/state-changes.ts';
import { applyEvent, initialSnapshot } from '../../src/runtime/lifecycle/transition.ts';

/** The agent whose samples the lifecycle benchmarks replay (the stack's default agent). */
export const BENCH_AGENT = 'book-meeting';

/**
 * The samples written for the `book-meeting` agent (statemachines/lead-lifecycle/samples/README.md):
 * one lead each, covering the goal, a cold revival, a stop without goal, a human takeover and a
 * second conversation.
 */
const BOOK_MEETING_SAMPLES = [
  'meeting-booked-as-goal.jsonl',
  'sparky-revival.jsonl',
  'non-goal-termination.jsonl',
  'human-intervention-to-deal.jsonl',
  're-entry-after-goal.jsonl',
];

export const LIFECYCLE_SAMPLES_DIR = join(STATEMACHINES_DIR, 'lead-lifecycle', 'samples');
export const WARRANTY_SAMPLE = join(STATEMACHINES_DIR, 'warranty-email', 'samples', 'valid-warranty.eml');

/** One lead's sample log, in file order (redeliveries included, as the CRM would send them). */
export interface LeadLog {
  sample: string;
  leadId: string;
  lines: ReplayLine[];
}

/** The `book-meeting` samples, parsed with the CLI's replay parser. */
export function bookMeetingLogs(): LeadLog[] {
  return BOOK_MEETING_SAMPLES.map((sample) => {
    const parsed = parseReplayFile(
      readFileSync(join(LIFECYCLE_SAMPLES_DIR, sample), 'utf8'),
      loadLifecycle('lead-lifecycle'),
    );
    if (parsed.malformed.length)
      throw new Error(`${sample}: malformed lines ${parsed.malformed.map((m) => m.line).join(', ')}`);
    const leadIds = new Set(parsed.events.map((l) => l.event.entityId));
    if (leadIds.size !== 1) throw new Error(`${sample}: expected one lead, found ${leadIds.size}`);
    return { sample, leadId: [...leadIds][0]!, lines: parsed.events };
  });
}

/**
 * A copy of a log under new event and lead ids: the event store skips ids it has logged, so
 * every iteration against one session needs fresh ones to do the same work again.
 */
export function renamed(log: LeadLog, tag: string): LeadLog {
  const rename = (event: LifecycleEvent): LifecycleEvent => ({
    ...event,
    id: `${event.id}~${tag}`,
    entityId: `${event.entityId}~${tag}`,
  });
  return { ...log, leadId: `${log.leadId}~${tag}`, lines: log.lines.map((l) => ({ ...l, event: rename(l.event) })) };
}

/**
 * `lanes` sequences of leads for a throughput run: lane j is every log, starting at the j-th, each
 * under fresh ids (`tag`), one after the other. Every lane has the same number of events, so the
 * k-th events of all lanes make a wave of exactly `lanes` events of distinct leads.
 */
export function leadLanes(logs: readonly LeadLog[], lanes: number, tag: string): LeadLog[][] {
  return Array.from({ length: lanes }, (_, j) =>
    logs.map((_, i) => renamed(logs[(i + j) % logs.length]!, `${tag}-${j}`)),
  );
}

/** A log's events without redeliveries: what the event store hands `applyEvent` (it dedups on the event id). */
export function appliedEvents(log: LeadLog): LifecycleEvent[] {
  const seen = new Set<string>();
  return log.lines.map((l) => l.event).filter((e) => !seen.has(e.id) && seen.add(e.id));
}

/** Apply a lead's events from a new snapshot: the pure core of what the lifecycle state machine does per event. */
export function applyAll(
  def: LifecycleDefinition,
  config: AgentConfig,
  events: readonly LifecycleEvent[],
): EntitySnapshot {
  let snapshot = initialSnapshot(def);
  for (const event of events) snapshot = applyEvent(def, snapshot, event, config).snapshot;
  return snapshot;
}

/** The final snapshot and the whole log (triggers and the events they raised) of applying `events` in order. */
export function replayLog(
  def: LifecycleDefinition,
  config: AgentConfig,
  events: readonly LifecycleEvent[],
): { snapshot: EntitySnapshot; log: LoggedEvent[] } {
  let snapshot = initialSnapshot(def);
  const log: LoggedEvent[] = [];
  for (const event of events) {
    const result = applyEvent(def, snapshot, event, config);
    snapshot = result.snapshot;
    log.push(...result.events);
  }
  return { snapshot, log };
}

/**
 * The envelopes the leads bus sees for these logs: every lead event as the replay puts it, and
 * every `lead.state_changed` the lifecycle publishes in reply. Built by the local bus itself from
 * the stack's template, so they are exactly what its rules match.
 */
export async function leadBusEnvelopes(
  template: CfnTemplate,
  busName: string,
  def: LifecycleDefinition,
  config: AgentConfig,
  logs: readonly LeadLog[],
): Promise<EventEnvelope[]> {
  // Deliveries are not the point here: accept and drop them.
  const bus = new LocalEventBus(template, { deliver: () => undefined });
  for (const log of logs) {
    let snapshot = initialSnapshot(def);
    for (const event of appliedEvents(log)) {
      const result = applyEvent(def, snapshot, event, config);
      const change = stateChangeOf(def, snapshot, result);
      snapshot = result.snapshot;
      const entries = [toPutEventsEntry(def, event, busName, REPLAY_SOURCE)];
      if (change)
        entries.push({
          EventBusName: busName,
          Source: LIFECYCLE_SOURCE,
          DetailType: stateChangedType(def),
          Detail: JSON.stringify(change),
        });
      const put = await bus.putEvents(entries);
      const failed = put.Entries.find((e) => e.ErrorCode);
      if (failed) throw new Error(`the local bus refused an entry: ${failed.ErrorCode} ${failed.ErrorMessage}`);
    }
  }
  await bus.drain();
  return [...bus.published];
}

/** The sample mail with its Message-ID made unique by `tag`: the ingress treats a repeated Message-ID as a duplicate and runs nothing. */
export function withMessageId(raw: string, tag: string): string {
  const rewritten = raw.replace(/^Message-ID:\s*<([^>]+)>/im, (_, id: string) => `Message-ID: <${tag}.${id}>`);
  if (rewritten === raw) throw new Error('the sample mail has no Message-ID header to rewrite');
  return rewritten;
}
