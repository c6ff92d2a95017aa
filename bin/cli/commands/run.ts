import { basename } from 'node:path';
import type { Command } from 'commander';
import { WarrantySession } from '../../../infra/local/warranty-session.ts';
import { InvalidInputError } from '../../../lambdas/lib/errors.ts';
import { action, printJson } from '../output.ts';
import {
  assertEmailWorkflow,
  formatEmailResults,
  logLevelFor,
  modelLabel,
  modelOption,
  progressLine,
  runExitCode,
  verboseOption,
  withCleanStdout,
  type SessionFlags,
} from '../session-output.ts';

interface RunFlags extends SessionFlags {
  email?: string[];
  registry?: string;
  json?: boolean;
}

export function register(program: Command): void {
  program
    .command('run')
    .description(
      'Process .eml files locally, in one session (one DynamoDB Local, so a repeated Message-ID is a DUPLICATE), through the ' +
        'real ingress and the synthesized ASL. Prints each email’s step trail and reply; --json prints one array, an object per ' +
        'email in input order. Exit code 1 when an email FAILED; REJECTED and DUPLICATE are normal outcomes (exit 0).',
    )
    .argument('<workflow>', 'the email workflow (warranty-email)')
    .option('--email <file-or-dir>', 'an .eml file, or a directory: every *.eml in it, sorted (repeatable)', (value: string, all: string[] = []) => [...all, value])
    .option('--registry <file>', 'the warranty registry (JSON array of { serial, product, warrantyEnd })')
    .addOption(modelOption())
    .option('--json', 'print the results as one JSON array, nothing else on stdout')
    .addOption(verboseOption())
    .action(
      action(async (workflow: string, flags: RunFlags) => {
        assertEmailWorkflow(workflow);
        const emails = flags.email ?? [];
        if (emails.length === 0) throw new InvalidInputError('give at least one --email FILE_OR_DIR');
        process.stderr.write(`stepwise run: ${workflow}, model: ${modelLabel(flags.model)}\n`);
        const results = await withCleanStdout(async () => {
          const session = await WarrantySession.start({ model: flags.model, registryFile: flags.registry, logLevel: logLevelFor(flags) });
          const progress = progressLine();
          try {
            return await session.processFiles(emails, (r, i, n) => progress.update(`[${i + 1}/${n}] ${basename(r.file)} ${r.status}`));
          } finally {
            progress.clear();
            await session.close();
          }
        });
        if (flags.json) printJson(results);
        else process.stdout.write(formatEmailResults(results));
        process.exitCode = runExitCode(results);
      }),
    );
}
