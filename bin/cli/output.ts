import { DefinitionError, StepwiseError } from '../../lambdas/lib/errors.ts';

/** Whether the command line asked for JSON: then every outcome, errors included, is JSON on stdout. */
export const wantsJson = (argv: readonly string[] = process.argv) => argv.includes('--json');

/** The one line an error prints as: known errors their message, others their name too. */
export function errorLine(error: unknown): string {
  const message =
    error instanceof DefinitionError || error instanceof StepwiseError
      ? error.message
      : error instanceof Error
        ? `${error.name}: ${error.message}`
        : String(error);
  return message.split('\n')[0]!;
}

/**
 * Print a one-line error and exit non-zero. With `--json`, stdout gets
 * `{ "error": { "type", "message" } }` as well, so scripts can parse every outcome.
 */
export function fail(error: unknown, code = 1): never {
  const line = errorLine(error);
  if (wantsJson()) printJson({ error: { type: error instanceof Error ? error.name : 'Error', message: line } });
  process.stderr.write(`stepwise: ${line}\n`);
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
