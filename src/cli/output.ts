import { styleText } from 'node:util';
import { DefinitionError, StepwiseError } from '../core/errors.ts';

/**
 * Whether to colour what goes to `stream`: a terminal, unless `NO_COLOR` is set (no-color.org) or
 * `TERM` is `dumb`; a non-empty `FORCE_COLOR` other than `0` colours anything.
 */
export function colorEnabled(
  stream: { isTTY?: boolean } = process.stdout,
  env: NodeJS.ProcessEnv = process.env,
): boolean {
  if (env.NO_COLOR) return false;
  if (env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== '') return env.FORCE_COLOR !== '0';
  return Boolean(stream.isTTY) && env.TERM !== 'dumb';
}

type Style = 'red' | 'green' | 'yellow' | 'bold' | 'dim';

/** `text` in `style` when {@link colorEnabled} for `stream`, as it is otherwise. */
export const paint = (style: Style, text: string, stream: { isTTY?: boolean } = process.stdout): string =>
  colorEnabled(stream) ? styleText(style, text) : text;

/**
 * A run or case status in its colour: green when it went well, red when it failed, yellow when it waits or was refused.
 */
export function paintStatus(status: string, stream?: { isTTY?: boolean }): string {
  const style: Style = /^(SUCCEEDED|PASSED|✓)/.test(status) ? 'green' : /^(FAILED|✗)/.test(status) ? 'red' : 'yellow';
  return paint(style, status, stream);
}

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
  process.stderr.write(`${paint('red', 'stepwise:', process.stderr)} ${line}\n`);
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
