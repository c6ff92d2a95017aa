/**
 * Step Functions' payload quota: 262,144 bytes (256 KiB) of UTF-8 JSON for a task's result and for
 * a state's input or output. What AWS does when it is exceeded (recorded against AWS in LocalStack's
 * validated snapshots, `test_states_errors`):
 *
 * - a Task's result over the quota fails the task with `States.DataLimitExceeded`; that is a task
 *   failure, which `Retry`/`Catch` match, `States.ALL` included;
 * - a state's input (after `InputPath`/`Parameters`) or output over the quota fails the execution
 *   with `States.DataLimitExceeded` at once: terminal, neither retried nor caught, the state never exits.
 */

export const PAYLOAD_LIMIT_BYTES = 262_144;

/**
 * The size Step Functions counts of a payload: its JSON text, UTF-8 encoded (the runtime has the text already: the
 * history shows it).
 */
export function textBytes(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

const DATA_LIMIT_EXCEEDED = 'States.DataLimitExceeded';

/** A Task's result over the quota. `resource` is what AWS names: the function ARN, or the integration (`lambda`). */
export class TaskResultTooLargeError extends Error {
  constructor(resource: string) {
    super(
      `The state/task '${resource}' returned a result with a size exceeding the maximum number of bytes service limit.`,
    );
    this.name = DATA_LIMIT_EXCEEDED;
  }
}

/** A state's input or output over the quota: ends the execution (the interpreter neither retries nor catches it). */
export class StateDataLimitExceededError extends Error {
  constructor(state: string, which: 'input' | 'output', bytes: number) {
    super(
      which === 'output'
        ? `The state/task '${state}' returned a result with a size exceeding the maximum number of bytes service limit.`
        : `The state/task '${state}' received an input of ${bytes} bytes, exceeding the maximum number of bytes service limit (${PAYLOAD_LIMIT_BYTES}).`,
    );
    this.name = DATA_LIMIT_EXCEEDED;
  }
  get isRetryable(): boolean {
    return false;
  }
  get isCatchable(): boolean {
    return false;
  }
}

/** Throw the terminal error when a state's `input`/`output` (its JSON `text`) is over the quota. */
export function checkStatePayload(state: string, which: 'input' | 'output', text: string): void {
  const bytes = textBytes(text);
  if (bytes > PAYLOAD_LIMIT_BYTES) throw new StateDataLimitExceededError(state, which, bytes);
}
