/**
 * Event steps, locally. Their `.waitForTaskToken` Task suspends the execution like any pause (see
 * pauses.ts), keeping the Task's request: the correlation key, the awaited source and
 * detail-type. An event delivered here (put on the local bus, whose rule targets the resumer, or
 * sent by `stepwise send-event`) resumes the paused execution whose key it carries, as the
 * deployed resumer does (src/runtime/triggers/event-wait/): once, since a resume uses the pause
 * up; at or after the deadline (the event's time) the execution takes its timeout route instead.
 * Every event's outcome, with its reason when it resumed nothing, is kept in
 * {@link LocalEventWaits.outcomes} and in its {@link OutcomeLedger} (the project's `events.jsonl`
 * for a session), so a later event for a wait already used up is told apart from one for no wait.
 */
import { randomUUID } from 'node:crypto';
import { appendFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import * as z from 'zod';
import { ENTRY_METADATA } from '../../cdk/metadata.ts';
import { EVENT_RESUMER_ENTRY } from '../../cdk/names.ts';
import { ExecutionClaimedError } from '../../core/errors.ts';
import { keyText, valueAt } from '../../definitions/workflow/constructs/event.ts';
import {
  type ArrivedEvent,
  EventEnvelopeSchema,
  type EventOutcome,
  EventWaitRequestSchema,
} from '../../runtime/triggers/event-wait/waits.ts';
import type { LocalExecution, LocalRuntime } from '../asl/runtime.ts';
import { type Deliver, LocalEventBus } from '../cloud/eventbridge/bus.ts';
import { type CfnTemplate, resolveIntrinsics } from '../cloud/intrinsics.ts';
import { expiredAt, type PausedTask } from '../records/pauses.ts';

/** An event as a person or a test gives it; `time` defaults to now. */
export interface OutsideEvent {
  source: string;
  detailType: string;
  detail: Record<string, unknown>;
  time?: Date;
  id?: string;
}

/** The EventBridge envelope of an event given by hand. */
export const envelopeOf = (event: OutsideEvent): ArrivedEvent => ({
  id: event.id ?? randomUUID(),
  source: event.source,
  'detail-type': event.detailType,
  time: (event.time ?? new Date()).toISOString(),
  detail: event.detail,
});

/** The waiting request of a paused event step, if the pause is one. */
function waitOf(paused: PausedTask) {
  const payload = (paused.request as { Payload?: unknown } | null)?.Payload;
  const parsed = EventWaitRequestSchema.safeParse(payload);
  return parsed.success ? parsed.data : undefined;
}

/** The paused event steps an event is for: same source and detail-type, and the key at their `match`. */
export function waitingFor(event: ArrivedEvent, paused: readonly PausedTask[]) {
  return paused.flatMap((p) => {
    const wait = waitOf(p);
    const matches =
      wait &&
      wait.source === event.source &&
      wait.detailType === event['detail-type'] &&
      keyText(valueAt(event.detail, wait.match) ?? null) === keyText(wait.key);
    return matches ? [{ paused: p, wait }] : [];
  });
}

const OutcomeBase = z.object({
  eventId: z.string(),
  source: z.string(),
  detailType: z.string(),
  step: z.string().optional(),
  key: z.string().optional(),
  execution: z.string().optional(),
  /** When the event arrived (its time). */
  at: z.string(),
  /** For an outcome that used a wait up: where the event carries the key, to recognise a later event for it. */
  match: z.string().optional(),
});

/** An outcome as the ledger keeps it. */
export const RecordedOutcomeSchema = z.union([
  OutcomeBase.extend({ outcome: z.literal('resumed') }),
  OutcomeBase.extend({
    outcome: z.literal('unmatched'),
    reason: z.enum(['no-waiting-execution', 'after-deadline', 'already-resumed', 'no-key']),
  }),
]);
export type RecordedOutcome = z.infer<typeof RecordedOutcomeSchema>;

/** Where outcomes are kept, append-only. */
export interface OutcomeLedger {
  append(outcomes: readonly RecordedOutcome[]): void;
  read(): RecordedOutcome[];
}

/** A ledger in memory: what a session without a state folder, or a test, keeps. */
export function memoryLedger(): OutcomeLedger {
  const kept: RecordedOutcome[] = [];
  return { append: (outcomes) => void kept.push(...outcomes), read: () => [...kept] };
}

/** A ledger in a JSON-lines file (one outcome a line), shared by every process of the project. */
export function fileLedger(file: string): OutcomeLedger {
  return {
    append(outcomes) {
      if (!outcomes.length) return;
      mkdirSync(dirname(file), { recursive: true });
      // One write per event: concurrent appenders interleave whole lines.
      appendFileSync(file, outcomes.map((o) => JSON.stringify(o) + '\n').join(''));
    },
    read: () =>
      existsSync(file)
        ? readFileSync(file, 'utf8')
            .split('\n')
            .filter(Boolean)
            .map((line) => RecordedOutcomeSchema.parse(JSON.parse(line)))
        : [],
  };
}

/**
 * What became of an event no paused step waits for: if an earlier event used up a wait with the
 * key this one carries, `already-resumed` (or `after-deadline`, when the wait had timed out),
 * else `no-waiting-execution`.
 */
export function unmatchedOutcome(event: ArrivedEvent, earlier: readonly RecordedOutcome[]): RecordedOutcome {
  const base = { eventId: event.id, source: event.source, detailType: event['detail-type'], at: event.time };
  const used = earlier.findLast(
    (o) =>
      o.match !== undefined &&
      o.source === event.source &&
      o.detailType === event['detail-type'] &&
      o.key === keyText(valueAt(event.detail, o.match) ?? null),
  );
  if (!used) return { ...base, outcome: 'unmatched', reason: 'no-waiting-execution' };
  const { step, key, execution } = used;
  const reason = used.outcome === 'resumed' ? 'already-resumed' : 'after-deadline';
  return { ...base, step, key, execution, outcome: 'unmatched', reason };
}

/** Record an event no paused step waits for (see {@link unmatchedOutcome}). */
export function recordUnmatched(event: ArrivedEvent, ledger: OutcomeLedger): RecordedOutcome {
  const outcome = unmatchedOutcome(event, ledger.read());
  ledger.append([outcome]);
  return outcome;
}

/** What a ledger's record says to a caller: the outcome without the ledger's own fields. */
export const asOutcome = ({ at: _, match: __, ...o }: RecordedOutcome): EventOutcome => o;

/** The paused executions of one workflow: a session resumes only its own workflow's (the others' tables are not there). */
export const workflowPauses = (
  runtime: Pick<LocalRuntime, 'pausedExecutions' | 'resumeExecution'>,
  workflow: string,
): Pick<LocalRuntime, 'pausedExecutions' | 'resumeExecution'> => ({
  // An execution whose first Task is its wait has no recorded workflow; the wait's request names it.
  pausedExecutions: () => runtime.pausedExecutions().filter((p) => (p.workflow ?? waitOf(p)?.workflow) === workflow),
  resumeExecution: (name, resolution, options) => runtime.resumeExecution(name, resolution, options),
});

/** What a delivery did: each outcome, and the executions it resumed (or timed out). */
export interface Delivered {
  outcomes: EventOutcome[];
  executions: LocalExecution[];
}

/** Resumes paused event steps with the events given to it; keeps what became of each. */
export class LocalEventWaits {
  /** This instance's events' outcomes, in arrival order: resumed, or unmatched with its reason. */
  readonly outcomes: EventOutcome[] = [];

  constructor(
    private readonly runtime: Pick<LocalRuntime, 'pausedExecutions' | 'resumeExecution'>,
    private readonly ledger: OutcomeLedger = memoryLedger(),
  ) {}

  /** Deliver one event. */
  send(event: OutsideEvent): Promise<Delivered> {
    return this.deliver(envelopeOf(event));
  }

  /** Deliver an EventBridge envelope (checked: it is outside input). */
  async deliver(envelope: unknown): Promise<Delivered> {
    const event: ArrivedEvent = EventEnvelopeSchema.parse(envelope);
    const now = new Date(event.time);
    const base = { eventId: event.id, source: event.source, detailType: event['detail-type'], at: event.time };
    const waiting = waitingFor(event, this.runtime.pausedExecutions());
    if (!waiting.length) {
      const outcome = asOutcome(recordUnmatched(event, this.ledger));
      this.outcomes.push(outcome);
      return { outcomes: [outcome], executions: [] };
    }
    const recorded: RecordedOutcome[] = [];
    const executions: LocalExecution[] = [];
    for (const { paused, wait } of waiting) {
      const at = { ...base, step: wait.step, key: keyText(wait.key), execution: paused.executionArn };
      const late = expiredAt(paused, now) !== undefined;
      try {
        executions.push(
          await this.runtime.resumeExecution(paused.name, late ? { timeout: true } : { output: event.detail }, { now }),
        );
        const used = { ...at, match: wait.match };
        recorded.push(
          late ? { ...used, outcome: 'unmatched', reason: 'after-deadline' } : { ...used, outcome: 'resumed' },
        );
      } catch (e) {
        if (!(e instanceof ExecutionClaimedError)) throw e;
        recorded.push({ ...at, outcome: 'unmatched', reason: 'already-resumed' });
      }
    }
    this.ledger.append(recorded);
    const outcomes = recorded.map(asOutcome);
    this.outcomes.push(...outcomes);
    return { outcomes, executions };
  }

  /** A local bus `deliver` for the resumer's rules: events to `resumerArn` come here, others to `other`. */
  busTarget(resumerArn: string, other?: Deliver): Deliver {
    return async (arn, input, context) => {
      if (arn === resumerArn) return this.deliver(input);
      if (other) return other(arn, input, context);
      throw new Error(`no local target for ${arn}`);
    };
  }
}

/**
 * A stack's EventBridge rules in process, the way a session sees them: an event put on it that
 * matches an event step's rule reaches the resumer, here `waits`. Undefined for a stack without
 * event steps (no resumer).
 */
export function resumerBus(template: CfnTemplate, waits: LocalEventWaits): LocalEventBus | undefined {
  const resumer = Object.entries(template.Resources ?? {}).find(
    ([, r]) => r.Type === 'AWS::Lambda::Function' && r.Metadata?.[ENTRY_METADATA] === EVENT_RESUMER_ENTRY,
  )?.[0];
  if (!resumer) return undefined;
  const arn = resolveIntrinsics({ 'Fn::GetAtt': [resumer, 'Arn'] }, template) as string;
  return new LocalEventBus(template, { deliver: waits.busTarget(arn) });
}
