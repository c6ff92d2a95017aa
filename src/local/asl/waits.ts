/**
 * Wait states, locally: nothing sleeps. Every Wait state ends at once (the interpreter's wait
 * override is 0 ms), and the session's clock moves to when it would have ended: `Seconds` or
 * `SecondsPath` after the clock's now, `Timestamp` or `TimestampPath` (never backwards). A test
 * or an eval reads the clock to see how long an execution would have waited, and sets where it
 * starts; a three-day reminder runs in milliseconds.
 */
import { JSONPath } from 'jsonpath-plus';

/** The clock Wait states move. */
export interface SessionClock {
  now(): Date;
  /** Move to `time`; a time before now leaves the clock where it is. */
  advanceTo(time: Date): void;
}

/** A clock that starts at `start` and moves only when told. */
export function sessionClock(start: Date = new Date()): SessionClock {
  let now = start.getTime();
  return {
    now: () => new Date(now),
    advanceTo: (time) => {
      now = Math.max(now, time.getTime());
    },
  };
}

type WaitState = { Type: string; Seconds?: number; SecondsPath?: string; Timestamp?: string; TimestampPath?: string };

/** The interpreter's override for every Wait state of a definition: 0 ms. */
export function instantWaits(states: ReadonlyMap<string, { Type: string }>): Record<string, number> {
  return Object.fromEntries([...states].filter(([, s]) => s.Type === 'Wait').map(([name]) => [name, 0]));
}

const read = (input: unknown, path: string): unknown =>
  JSONPath({ path, json: input as object, wrap: false }) as unknown;

/**
 * When a Wait state entered with `input` at `now` ends, as Step Functions computes it.
 * @throws Error for a path that holds no number or timestamp (the interpreter fails the state the same way).
 */
export function waitEnd(state: WaitState, input: unknown, now: Date): Date {
  const seconds = state.Seconds ?? (state.SecondsPath === undefined ? undefined : read(input, state.SecondsPath));
  if (seconds !== undefined) {
    if (typeof seconds !== 'number') throw new Error(`Wait: ${state.SecondsPath} is not a number of seconds`);
    return new Date(now.getTime() + seconds * 1000);
  }
  const timestamp =
    state.Timestamp ?? (state.TimestampPath === undefined ? undefined : read(input, state.TimestampPath));
  const time = typeof timestamp === 'string' ? new Date(timestamp) : undefined;
  if (!time || Number.isNaN(time.getTime())) throw new Error(`Wait: ${state.TimestampPath} is not a timestamp`);
  return time;
}
