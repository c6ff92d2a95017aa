import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Command } from 'commander';
import { WORKFLOW_CODE_DIR } from '../../lambdas/lib/workflow/plugin.ts';

const here = dirname(fileURLToPath(import.meta.url));

/** The installed Stepwise version (package.json). */
export const version = (JSON.parse(readFileSync(join(here, '../../package.json'), 'utf8')) as { version: string }).version;

/**
 * The `stepwise` program with every command registered, not yet parsed: `main.ts` runs it, the
 * CLI reference (docs/reference/cli.md) is generated from it.
 *
 * Every file in `commands/` exports `register(program)`; adding a command is adding a file. A
 * workflow may add its own commands the same way, from `lambdas/workflows/<workflow>/cli.ts`.
 */
export async function createProgram(): Promise<Command> {
  const program = new Command('stepwise')
    .description('Step workflows on AWS Step Functions, runnable locally with no AWS account.')
    .version(version, '-V, --version', 'print the Stepwise version')
    // Usage errors become one line (and a JSON error object with --json) instead of commander's help dump.
    .exitOverride()
    .configureOutput({ outputError: () => undefined });

  const commandDir = join(here, 'commands');
  const modules = [
    ...readdirSync(commandDir).filter((f) => f.endsWith('.ts')).sort().map((f) => join(commandDir, f)),
    ...readdirSync(WORKFLOW_CODE_DIR, { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => join(WORKFLOW_CODE_DIR, d.name, 'cli.ts'))
      .filter((f) => existsSync(f)),
  ];
  for (const file of modules) {
    const mod = await import(pathToFileURL(file).href);
    mod.register(program);
  }
  return program;
}
