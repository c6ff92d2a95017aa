/**
 * EventBridge Scheduler, emulated on an injected clock: the local adapter of the lifecycle's
 * `TimerScheduler` port. Schedules are one-time, named, replaced by name (never by an older timer,
 * like the AWS adapter) and deleted after they fire. Nothing runs on wall-clock time: `advanceTo`
 * moves the clock and fires every schedule due on the way, in due order (ties by name), letting
 * the caller settle (drain the bus) after each firing, since a firing may set the next timer.
 * So `stepwise lifecycle <name> replay --clock` plays months in milliseconds, and tests are deterministic.
 */
import { LocalServiceError } from '../../core/errors.ts';
import type { TimerScheduler } from '../../runtime/lifecycle/ports.ts';
import { supersedes, type TimerRequest } from '../../runtime/lifecycle/timers.ts';

/** A schedule that fired. */
export interface FiredTimer {
  name: string;
  kind: TimerRequest['kind'];
  entityId: string;
  dueAt: string;
  detailType: string;
}

/** A schedule whose delivery failed every attempt (Scheduler's dead-letter queue). */
export interface TimerDeadLetter {
  request: TimerRequest;
  error: string;
}

/** A call the scheduler received, in order. */
export type SchedulerCall = { op: 'set' | 'kept'; request: TimerRequest } | { op: 'cancel'; name: string };

export interface LocalSchedulerOptions {
  /** Puts the schedule's delivery on the bus. */
  deliver: (request: TimerRequest) => Promise<void>;
  /** The clock's start (epoch ms). @default 0: the first advance sets it */
  start?: number;
  /** Delivery attempts before the dead-letter queue, like the schedules' retry policy. @default 3 */
  maxAttempts?: number;
}

export class LocalScheduler implements TimerScheduler {
  /** Every schedule that fired, in firing order. */
  readonly fired: FiredTimer[] = [];
  readonly deadLetters: TimerDeadLetter[] = [];
  /** Every set, kept (an older timer refused) and cancel, in call order. */
  readonly calls: SchedulerCall[] = [];
  private readonly schedules = new Map<string, TimerRequest>();
  private current: number;

  constructor(private readonly options: LocalSchedulerOptions) {
    this.current = options.start ?? 0;
  }

  /** The emulated time (epoch ms). */
  now = (): number => this.current;

  async set(request: TimerRequest): Promise<'set' | 'kept'> {
    const existing = this.schedules.get(request.name);
    const op = existing && !supersedes(request.stamp, existing.stamp) ? 'kept' : 'set';
    this.calls.push({ op, request: structuredClone(request) });
    if (op === 'set') this.schedules.set(request.name, structuredClone(request));
    return op;
  }

  async cancel(name: string): Promise<void> {
    this.calls.push({ op: 'cancel', name });
    this.schedules.delete(name);
  }

  async get(name: string): Promise<TimerRequest | undefined> {
    const t = this.schedules.get(name);
    return t && structuredClone(t);
  }

  /** Schedules not fired yet, in due order. */
  get pending(): TimerRequest[] {
    return [...this.schedules.values()].sort(byDue);
  }

  /**
   * Move the clock to `time` (never backwards), firing every schedule due at or before it in due
   * order; `settle` runs after each firing.
   * @throws LocalServiceError for a time that is not a date.
   */
  async advanceTo(time: number | string, settle: () => Promise<void> = async () => {}): Promise<void> {
    const target = typeof time === 'string' ? Date.parse(time) : time;
    if (Number.isNaN(target)) throw new LocalServiceError(`the local scheduler cannot advance to ${String(time)}`);
    for (;;) {
      const next = this.pending[0];
      if (!next || Date.parse(next.dueAt) > target) break;
      this.current = Math.max(this.current, Date.parse(next.dueAt));
      // ActionAfterCompletion DELETE: the schedule is gone once it fires; the delivery may set a new one.
      this.schedules.delete(next.name);
      await this.fire(next);
      await settle();
    }
    this.current = Math.max(this.current, target);
  }

  private async fire(request: TimerRequest): Promise<void> {
    const attempts = this.options.maxAttempts ?? 3;
    let error: unknown;
    for (let attempt = 1; attempt <= attempts; attempt++) {
      try {
        await this.options.deliver(request);
        this.fired.push({
          name: request.name,
          kind: request.kind,
          entityId: request.entityId,
          dueAt: request.dueAt,
          detailType: request.delivery.detailType,
        });
        return;
      } catch (e) {
        error = e;
      }
    }
    this.deadLetters.push({ request, error: (error as Error).message ?? String(error) });
  }
}

function byDue(a: TimerRequest, b: TimerRequest): number {
  return Date.parse(a.dueAt) - Date.parse(b.dueAt) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
}
