/**
 * The replay files of `stepwise lifecycle <name> replay` and the lifecycle tests: JSON Lines of
 * lifecycle events and clock lines, parsed and checked before anything is put on the bus.
 */
import * as z from 'zod';
import { JsonObjectSchema } from '../../core/dynamo-json.ts';
import { InvalidInputError } from '../../core/errors.ts';
import type { LifecycleDefinition, LifecycleEvent } from '../../definitions/lifecycle/schema.ts';
import { REPLAY_SOURCE } from '../../definitions/lifecycle/schema.ts';
import { toPutEventsEntry } from '../../runtime/lifecycle/envelope.ts';
import { entrySize, MAX_PUT_EVENTS_BYTES } from '../cloud/eventbridge/bus.ts';

/** A line of a replay file that is an event. */
export interface ReplayLine {
  line: number;
  event: LifecycleEvent;
}

/** A line of a replay file that moves the clock: `{ "clock": "<ISO time>" }`. */
export interface ClockLine {
  line: number;
  clock: string;
}

/** What a JSON Lines replay file holds: its events, its clock lines, and every non-blank line that is neither. */
export interface ParsedReplayFile {
  events: ReplayLine[];
  /** Events and clock lines in file order. */
  timeline: (ReplayLine | ClockLine)[];
  malformed: { line: number; error: string }[];
  /** Non-blank lines: `timeline.length + malformed.length`. */
  lines: number;
}

const ClockLineSchema = z.object({ clock: z.iso.datetime({ offset: true }) }).strict();

/**
 * Parse a JSON Lines file of lifecycle events (`{ "id", "<entity key>", "type", "time", "detail"? }`
 * per line, the entity key being the statechart's `entity.key`: `leadId` for the lead lifecycle)
 * and clock lines (`{ "clock": "<ISO time>" }`: the emulated clock moves there, firing the timers
 * due on the way). Blank lines are skipped; any other line that is not such an event (or one
 * EventBridge would refuse, 256 KiB or more) is reported with its (1-based) line number, never dropped silently.
 */
export function parseReplayFile(text: string, def: LifecycleDefinition): ParsedReplayFile {
  const parsed: ParsedReplayFile = { events: [], timeline: [], malformed: [], lines: 0 };
  const lineSchema = z.object({
    id: z.string().min(1),
    [def.entity.key]: z.string().min(1),
    type: z.string().min(1),
    time: z.iso.datetime({ offset: true }),
    detail: JsonObjectSchema.optional(),
  });
  text.split(/\r?\n/).forEach((raw, i) => {
    if (!raw.trim()) return;
    parsed.lines++;
    const line = i + 1;
    try {
      let value: unknown;
      try {
        value = JSON.parse(raw);
      } catch (e) {
        throw new InvalidInputError(`not JSON: ${(e as Error).message}`);
      }
      const tick = ClockLineSchema.safeParse(value);
      if (tick.success) return void parsed.timeline.push({ line, clock: tick.data.clock });
      const result = lineSchema.safeParse(value);
      if (!result.success) {
        const issue = result.error.issues[0]!;
        throw new InvalidInputError(`${issue.path.join('.') || '(root)'}: ${issue.message}`);
      }
      const { id, type, time, detail } = result.data as {
        id: string;
        type: string;
        time: string;
        detail?: Record<string, unknown>;
      };
      const event: LifecycleEvent = {
        id,
        entityId: result.data[def.entity.key] as string,
        type,
        time,
        ...(detail && { detail }),
      };
      // The envelope mapping has its own rules (reserved detail keys), and EventBridge its size limit: check them now, not on the bus.
      const bytes = entrySize(toPutEventsEntry(def, event, 'check', REPLAY_SOURCE));
      if (bytes >= MAX_PUT_EVENTS_BYTES)
        throw new InvalidInputError(
          `the event is ${bytes} bytes as a PutEvents entry; EventBridge takes entries under ${MAX_PUT_EVENTS_BYTES}`,
        );
      parsed.events.push({ line, event });
      parsed.timeline.push({ line, event });
    } catch (e) {
      parsed.malformed.push({ line, error: (e as Error).message });
    }
  });
  return parsed;
}

/** Consecutive events with the same time, in file order: each group may be sent concurrently. */
export function groupByTime<T extends { event: LifecycleEvent }>(lines: readonly T[]): T[][] {
  const groups: T[][] = [];
  for (const line of lines) {
    const last = groups.at(-1);
    if (last && Date.parse(last[0]!.event.time) === Date.parse(line.event.time)) last.push(line);
    else groups.push([line]);
  }
  return groups;
}
