import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Command } from 'commander';

/**
 * Every file in `commands/` exports `register(program)`; adding a command is adding a file.
 * Failures print one line on stderr and exit non-zero (see `fail` in ./output.ts).
 */
const program = new Command('stepwise')
  .description('Step workflows on AWS Step Functions, runnable locally with no AWS account.')
  .showHelpAfterError();

const dir = join(dirname(fileURLToPath(import.meta.url)), 'commands');
for (const file of readdirSync(dir).filter((f) => f.endsWith('.ts')).sort()) {
  const mod = await import(pathToFileURL(join(dir, file)).href);
  mod.register(program);
}
await program.parseAsync();
