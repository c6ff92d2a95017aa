/**
 * Fault injection for the local runtime: make chosen Task attempts fail, slow down, time out, or
 * crash after their side effects, to exercise the ASL's Retry/Catch and the tools' idempotency.
 */
import type { Context } from 'aws-lambda';
import { LocalRuntimeFault } from '../cloud/lambda.ts';

/**
 * A fault injected into the attempts of one Task state (by state name, at any depth).
 *
 * @example
 * // The first attempt runs the handler (its side effects happen), then the runtime crashes: Retry runs it again.
 * faults: { 'send-reply': { crashAfterSideEffect: true, times: 1 } }
 */
export interface TaskFault {
  /**
   * Fail the attempt with this error instead of its result, as a function error: Step Functions'
   * `Error` is `name` (so `Retry`/`Catch` `ErrorEquals` match it) and `Cause` the Lambda error payload.
   * @default `Runtime.ExitError` when only `crashAfterSideEffect` is set
   */
  error?: { name: string; message?: string };
  /** Wait this long before the attempt runs; it counts toward the function's and the Task's timeouts. */
  latencyMs?: number;
  /**
   * The attempt never returns: it ends as Lambda ends it (`Sandbox.Timedout` after the function's
   * `Timeout`), or with `States.Timeout` when the Task's `TimeoutSeconds`/`HeartbeatSeconds` is
   * shorter. Refused for a Task that has neither (it would never end).
   */
  timeout?: true;
  /**
   * Run the handler first (its side effects happen), then fail the attempt (with `error`, or by
   * `timeout`) instead of returning its result. Without it, the handler does not run.
   */
  crashAfterSideEffect?: true;
  /**
   * Fault only the first `times` attempts of the state in each execution (Map iterations included), so a retry can
   * succeed. @default every attempt
   */
  times?: number;
}

/** The error an injected fault throws; its `name` is what Retry/Catch match. */
export class InjectedFaultError extends Error {
  constructor(name: string, message: string) {
    super(message);
    this.name = name;
  }
}

/** What a Lambda runtime that dies mid-invocation reports. */
const CRASH = 'Runtime.ExitError';

type Handler = (event: any, context: Context) => unknown;

/** Refuse faults that could never take effect or never end, naming the state. */
export function validateFault(state: string, fault: TaskFault, canTimeOut: boolean): void {
  const where = `faults["${state}"]`;
  if (!fault.error && !fault.timeout && !fault.crashAfterSideEffect && fault.latencyMs === undefined) {
    throw new LocalRuntimeFault(`${where} injects nothing (set error, latencyMs, timeout or crashAfterSideEffect)`);
  }
  if (fault.timeout && fault.error) throw new LocalRuntimeFault(`${where}: choose error or timeout, not both`);
  if (fault.timeout && !canTimeOut) {
    throw new LocalRuntimeFault(
      `${where}: Task "${state}" has no function Timeout, TimeoutSeconds or HeartbeatSeconds, so the attempt would never end`,
    );
  }
  if (fault.times !== undefined && !(Number.isInteger(fault.times) && fault.times >= 1))
    throw new LocalRuntimeFault(`${where}.times must be a positive integer`);
  if (fault.latencyMs !== undefined && !(fault.latencyMs >= 0))
    throw new LocalRuntimeFault(`${where}.latencyMs must be >= 0`);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** `handler` with `fault` applied to one attempt. */
export function withFault(handler: Handler, fault: TaskFault): Handler {
  const fail = (context: Context): Promise<never> => {
    // Left pending: the function's or the Task's timeout ends the attempt.
    if (fault.timeout) return new Promise<never>(() => {});
    const name = fault.error?.name ?? CRASH;
    const message =
      fault.error?.message ??
      (fault.error
        ? `injected ${name}`
        : `RequestId: ${context.awsRequestId} Error: Runtime exited with error: exit status 1`);
    return Promise.reject(new InjectedFaultError(name, message));
  };
  return async (event, context) => {
    if (fault.latencyMs) await sleep(fault.latencyMs);
    if (fault.crashAfterSideEffect) {
      await handler(event, context);
      return fail(context);
    }
    if (fault.error || fault.timeout) return fail(context);
    return handler(event, context);
  };
}
