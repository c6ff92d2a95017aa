import { DefinitionError, StepwiseError } from '../../lambdas/lib/errors.ts';

/** Print a one-line error and exit non-zero. Known errors print their message; others their name too. */
export function fail(error: unknown, code = 1): never {
  const message =
    error instanceof DefinitionError || error instanceof StepwiseError
      ? error.message
      : error instanceof Error
        ? `${error.name}: ${error.message}`
        : String(error);
  process.stderr.write(`stepwise: ${message.split('\n')[0]}\n`);
  process.exit(code);
}

/** Run a command action, turning any thrown error into a one-line message and exit code 1. */
export function action<A extends unknown[]>(fn: (...args: A) => Promise<void> | void) {
  return async (...args: A) => {
    try {
      await fn(...args);
    } catch (e) {
      fail(e);
    }
  };
}

export function printJson(value: unknown): void {
  process.stdout.write(JSON.stringify(value, null, 2) + '\n');
}
