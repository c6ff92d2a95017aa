/**
 * Event steps, locally. Their `.waitForTaskToken` Task suspends the execution like any pause (see
 * pauses.ts), keeping the Task's request: the correlation key, the awaited source and
 * detail-type. An event delivered here (put on the local bus, whose rule targets the resumer, or
 * sent by `stepwise send-event`) resumes the paused execution whose key it carries, as the
 * deployed resumer does (src/runtime/triggers/event-wait/): once, since a resume uses the pause
 * up; at or after the deadline (the event's time) the execution takes its timeout route instead.
 * Every event that resumes nothing is kept with its reason in {@link LocalEventWaits.outcomes}.
 */
import { randomUUID } from 'node:crypto';
import { ExecutionClaimedError } from '../core/errors.ts';
import { keyText, valueAt } from '../definitions/workflow/constructs/event.ts';
import {
  type ArrivedEvent,
  EventEnvelopeSchema,
  type EventOutcome,
  EventWaitRequestSchema,
} from '../runtime/triggers/event-wait/waits.ts';
import type { Deliver } from './eventbridge/bus.ts';
import { expiredAt, type PausedTask } from './pauses.ts';
import type { LocalExecution, LocalRuntime } from './runtime.ts';

/** An event as a person or a test gives it; `time` defaults to now. */
export interface OutsideEvent {
  source: string;
  detailType: string;
  detail: Record<string, unknown>;
  time?: Date;
  id?: string;
}

/** The waiting request of a paused event step, if the pause is one. */
function waitOf(paused: PausedTask) {
  const payload = (paused.request as { Payload?: unknown } | null)?.Payload;
  const parsed = EventWaitRequestSchema.safeParse(payload);
  return parsed.success ? parsed.data : undefined;
}

/** Resumes paused event steps with the events given to it; keeps what became of each. */
export class LocalEventWaits {
  /** Every event's outcome, in arrival order: resumed, or unmatched with its reason. */
  readonly outcomes: EventOutcome[] = [];

  constructor(private readonly runtime: Pick<LocalRuntime, 'pausedExecutions' | 'resumeExecution'>) {}

  /** Deliver one event. @returns its outcomes and the executions it resumed (or timed out). */
  async send(event: OutsideEvent): Promise<{ outcomes: EventOutcome[]; executions: LocalExecution[] }> {
    return this.deliver({
      id: event.id ?? randomUUID(),
      source: event.source,
      'detail-type': event.detailType,
      time: (event.time ?? new Date()).toISOString(),
      detail: event.detail,
    });
  }

  /** Deliver an EventBridge envelope (checked: it is outside input). */
  async deliver(envelope: unknown): Promise<{ outcomes: EventOutcome[]; executions: LocalExecution[] }> {
    const event: ArrivedEvent = EventEnvelopeSchema.parse(envelope);
    const now = new Date(event.time);
    const base = { eventId: event.id, source: event.source, detailType: event['detail-type'] };
    const waiting = this.runtime.pausedExecutions().flatMap((paused) => {
      const wait = waitOf(paused);
      const matches =
        wait &&
        wait.source === event.source &&
        wait.detailType === event['detail-type'] &&
        keyText(valueAt(event.detail, wait.match) ?? null) === keyText(wait.key);
      return matches ? [{ paused, wait }] : [];
    });
    const outcomes: EventOutcome[] = [];
    const executions: LocalExecution[] = [];
    if (!waiting.length) outcomes.push({ ...base, outcome: 'unmatched', reason: 'no-waiting-execution' });
    for (const { paused, wait } of waiting) {
      const at = { ...base, step: wait.step, key: keyText(wait.key), execution: paused.executionArn };
      const late = expiredAt(paused, now) !== undefined;
      try {
        executions.push(
          await this.runtime.resumeExecution(paused.name, late ? { timeout: true } : { output: event.detail }, { now }),
        );
        outcomes.push(late ? { ...at, outcome: 'unmatched', reason: 'after-deadline' } : { ...at, outcome: 'resumed' });
      } catch (e) {
        if (!(e instanceof ExecutionClaimedError)) throw e;
        outcomes.push({ ...at, outcome: 'unmatched', reason: 'already-resumed' });
      }
    }
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
