/**
 * `stepwise/cli`: what a workflow's own CLI commands use. A workflow adds commands from
 * `lambdas/workflows/<workflow>/cli.ts`, which exports `register(program)`; `action` turns a
 * failure into one line on stderr (a JSON error object with `--json`) and a non-zero exit.
 *
 * @example
 * import type { Command } from 'commander';
 * import { action, printJson } from 'stepwise/cli';
 *
 * export function register(program: Command): void {
 *   program.command('tickets').option('--json').action(action(async (opts) => printJson({ tickets: [] })));
 * }
 */

export { awsOptions, envOption } from './aws-options.ts';
export { registerLifecycle } from './commands/lifecycle.ts';
export { withExamples } from './help.ts';
export { action, printJson } from './output.ts';
