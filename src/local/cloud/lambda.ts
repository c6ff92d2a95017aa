/**
 * Invoke a handler in-process the way the Lambda service does for Step Functions: the event and
 * the result cross a JSON boundary, and a thrown error becomes a function error whose `errorType`
 * (the error's `name`) is what Retry/Catch `ErrorEquals` match.
 */
import { randomUUID } from 'node:crypto';
import type { Context } from 'aws-lambda';

/** A local function as the template declares it. */
export interface LocalFunction {
  /** `AWS_LAMBDA_FUNCTION_NAME` (the FunctionName property, or the logical id). */
  name: string;
  arn: string;
  /**
   * The function's Timeout property (Lambda's default is 3): an invocation still running after it
   * fails with `Sandbox.Timedout`. Absent for a Task that is not a function (nothing times out).
   */
  timeoutSeconds?: number;
  memoryMB: number;
}

/** The payload Lambda returns for a Node.js function error. */
export interface LambdaErrorPayload {
  errorType: string;
  errorMessage: string;
  /** The stack, for errors the handler threw (Lambda's own errors, such as a timeout, have none). */
  trace?: string[];
}

/** The `errorType` Lambda reports for an invocation that ran past the function's Timeout (Step Functions' `Error`). */
export const LAMBDA_TIMEOUT_ERROR = 'Sandbox.Timedout';

/**
 * Thrown into the interpreter when a function fails. aws-local-stepfunctions matches `name` against
 * `ErrorEquals` and reports `message` as the `Cause`, so `name` is the errorType and `message` the
 * JSON payload — exactly what Step Functions shows for a Lambda task failure.
 */
export class LambdaFunctionError extends Error {
  constructor(readonly payload: LambdaErrorPayload) {
    super(JSON.stringify(payload));
    this.name = payload.errorType;
  }
}

/**
 * A fault of the local setup (a Task with no handler, a handler module without `createHandler`).
 * The interpreter neither retries nor catches it (`isRetryable`/`isCatchable` are false), so the
 * execution fails loudly instead of a States.ALL catcher routing it to the fallback.
 */
export class LocalRuntimeFault extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'States.Runtime';
  }
  get isRetryable(): boolean {
    return false;
  }
  get isCatchable(): boolean {
    return false;
  }
}

/** The error payload the Node.js Lambda runtime reports for a thrown value. */
function lambdaErrorPayload(error: unknown): LambdaErrorPayload {
  if (error instanceof Error) {
    return { errorType: error.name, errorMessage: error.message, trace: error.stack?.split('\n') ?? [] };
  }
  return { errorType: 'Error', errorMessage: String(error), trace: [] };
}

/** A Lambda `Context` for one invocation; `getRemainingTimeInMillis` counts down from the function's timeout. */
function lambdaContext(fn: LocalFunction): Context {
  const deadline = Date.now() + (fn.timeoutSeconds ?? Infinity) * 1000;
  const unsupported = () => {
    throw new Error('callback-style completion (done/fail/succeed) is not supported; return or throw');
  };
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName: fn.name,
    functionVersion: '$LATEST',
    invokedFunctionArn: fn.arn,
    memoryLimitInMB: String(fn.memoryMB),
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${fn.name}`,
    logStreamName: 'local',
    // No deadline (not a function): as much time as a Lambda function can ever have (15 minutes).
    getRemainingTimeInMillis: () => (deadline === Infinity ? 900_000 : Math.max(0, deadline - Date.now())),
    done: unsupported,
    fail: unsupported,
    succeed: unsupported,
  };
}

/** Serialize like the Lambda runtime (`undefined` becomes `null`): the JSON copy and its text. */
function json(value: unknown): { value: unknown; text: string } {
  const text = JSON.stringify(value) ?? 'null';
  return { value: JSON.parse(text), text };
}

/**
 * Call `handler` with a JSON copy of `event` and return a JSON copy of its result. A thrown error
 * (or a result that cannot be serialized) is rethrown as a {@link LambdaFunctionError}; so is an
 * invocation still running after the function's timeout (`Sandbox.Timedout`, as Lambda reports it;
 * the handler itself cannot be stopped and runs on in the background, as it would in Lambda until
 * the sandbox is torn down).
 */
export async function invokeLikeLambda(
  handler: (event: any, context: Context) => unknown,
  event: unknown,
  fn: LocalFunction,
): Promise<unknown> {
  return (await invokeJsonCopy(handler, json(event).value, fn)).value;
}

/** {@link invokeLikeLambda} for an event that is a JSON copy already (the caller made its text): the result's JSON copy and text. */
export async function invokeJsonCopy(
  handler: (event: any, context: Context) => unknown,
  event: unknown,
  fn: LocalFunction,
): Promise<{ value: unknown; text: string }> {
  const context = lambdaContext(fn);
  let timer: NodeJS.Timeout | undefined;
  let result: unknown;
  try {
    const running = Promise.resolve().then(() => handler(event, context));
    if (fn.timeoutSeconds === undefined) {
      result = await running;
    } else {
      const seconds = fn.timeoutSeconds;
      const timedOut = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () =>
            reject(
              new LambdaFunctionError({
                errorType: LAMBDA_TIMEOUT_ERROR,
                errorMessage: `RequestId: ${context.awsRequestId} Error: Task timed out after ${seconds.toFixed(2)} seconds`,
              }),
            ),
          seconds * 1000,
        );
      });
      result = await Promise.race([running, timedOut]);
    }
  } catch (error) {
    throw error instanceof LambdaFunctionError ? error : new LambdaFunctionError(lambdaErrorPayload(error));
  } finally {
    clearTimeout(timer);
  }
  try {
    return json(result);
  } catch (error) {
    throw new LambdaFunctionError({ ...lambdaErrorPayload(error), errorType: 'Runtime.MarshalError' });
  }
}
