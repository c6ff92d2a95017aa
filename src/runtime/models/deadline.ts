/**
 * Deadlines of model calls. One step invocation's model calls share one budget taken from the
 * step's own timeout (the Lambda's), divided among every invocation the state machine may make of
 * the step one after another: its retry attempts and, for a consensus sample, its waves. So a model
 * endpoint that hangs ends the step within its timeout, however many samples and attempts it
 * makes, instead of each call waiting for the provider's own timeout. Within the budget each call
 * has one deadline (the budget left), and a throttled call whose `Retry-After` fits in what is left
 * is waited out and sent again; one that does not fit goes to the state machine's backoff.
 */
import { ModelThrottledError, ModelTimeoutError } from '../../core/errors.ts';
import type { ConverseRequest, ConverseResponse, ModelProvider } from '../contracts/model-port.ts';

/** What the budget of one invocation is taken from. */
export interface StepTiming {
  /** The Lambda's time left as the invocation starts: the step's own timeout. */
  timeoutMs: number;
  /** Invocations of the step the state machine makes at most: 1 + the manifest's `retry.maxAttempts`. */
  attempts: number;
  /** Invocations that run one after another within one attempt's place (a consensus step's waves); 1 otherwise. */
  rounds: number;
}

/** Kept free at the end of the Lambda for the event log, metrics and the response: 5 s, or a fifth of a shorter timeout. */
export function finishReserveMs(timeoutMs: number): number {
  return Math.min(5_000, Math.floor(timeoutMs / 5));
}

/**
 * The time one invocation's model calls may take together: the step's timeout shared by every
 * attempt and round, and never past the finish reserve. Pure.
 * @example invocationBudgetMs({ timeoutMs: 120_000, attempts: 4, rounds: 2 }) // 15_000
 */
export function invocationBudgetMs({ timeoutMs, attempts, rounds }: StepTiming): number {
  const shared = Math.floor(timeoutMs / (Math.max(1, attempts) * Math.max(1, rounds)));
  return Math.max(0, Math.min(shared, timeoutMs - finishReserveMs(timeoutMs)));
}

/** The clock and the wait a deadline uses (tests pass their own). */
export interface DeadlineClock {
  now: () => number;
  sleep: (ms: number) => Promise<void>;
}

const realClock: DeadlineClock = {
  now: () => Date.now(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
};

/** Seconds a throttled call's endpoint asked to wait (`Retry-After`), when it said. */
function retryAfterMs(error: unknown): number | undefined {
  if (!(error instanceof ModelThrottledError)) return undefined;
  const seconds = (error as { retryAfterSeconds?: unknown }).retryAfterSeconds;
  return typeof seconds === 'number' && Number.isFinite(seconds) ? seconds * 1000 : undefined;
}

/** An abort signal that fires after `ms` (a timer, so a test's fake timers move it too). */
function deadlineSignal(ms: number): { signal: AbortSignal; clear: () => void } {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new ModelTimeoutError(`the deadline of ${ms} ms passed`)), ms);
  timer.unref?.();
  return { signal: controller.signal, clear: () => clearTimeout(timer) };
}

/**
 * The budget of one step invocation's model calls.
 * @example
 * const deadline = new ModelDeadline(invocationBudgetMs({ timeoutMs: 120_000, attempts: 4, rounds: 1 }));
 * const response = await deadline.converse(model, request, '01-extract-serial');
 */
export class ModelDeadline {
  private readonly endsAt: number;

  constructor(
    readonly budgetMs: number,
    private readonly clock: DeadlineClock = realClock,
  ) {
    this.endsAt = clock.now() + budgetMs;
  }

  /** Milliseconds of the budget left. */
  leftMs(): number {
    return Math.max(0, this.endsAt - this.clock.now());
  }

  /**
   * One model call, cut at the deadline (`ModelTimeoutError`, which the ASL retries); a throttled
   * call is sent again after its `Retry-After` when the wait fits in the budget left.
   * @throws ModelTimeoutError when the budget is used up; the provider's typed errors otherwise.
   */
  async converse(model: ModelProvider, request: ConverseRequest, step: string): Promise<ConverseResponse> {
    for (;;) {
      try {
        return await this.callOnce(model, request, step);
      } catch (e) {
        const wait = retryAfterMs(e);
        if (wait === undefined || wait >= this.leftMs()) throw e;
        await this.clock.sleep(wait);
      }
    }
  }

  /** One call with the budget left as its deadline. */
  private async callOnce(model: ModelProvider, request: ConverseRequest, step: string): Promise<ConverseResponse> {
    const left = this.leftMs();
    if (left <= 0) throw new ModelTimeoutError(`${step}: the step's model budget of ${this.budgetMs} ms is used up`);
    const { signal, clear } = deadlineSignal(left);
    try {
      return await model.converse(request, { signal });
    } catch (e) {
      if (!signal.aborted) throw e;
      throw new ModelTimeoutError(
        `${step}: no model answer within the step's deadline (${this.budgetMs} ms, from the step's timeout)`,
        { cause: e },
      );
    } finally {
      clear();
    }
  }
}
