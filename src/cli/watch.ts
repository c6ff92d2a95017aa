/**
 * `--watch` for `run` and `eval`: the command runs in a child process (a fresh process sees the
 * changed definitions: the loader, the plugin imports and the in-process synth are cached per
 * process), and runs again after a file under the workflow's folders changes.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, watch } from 'node:fs';
import { join, relative } from 'node:path';
import { Option } from 'commander';
import { PACKAGE_ROOT, WORKFLOW_CODE_DIR } from '../core/paths.ts';
import type { WorkflowDefinition } from '../definitions/workflow/schema.ts';

export const watchOption = () =>
  new Option(
    '--watch',
    "run again whenever a file of the workflow's definitions (statemachines/<workflow>/) or code changes; Ctrl-C stops",
  );

/** A workflow's definitions (`statemachines/<workflow>/`) and code (`lambdas/workflows/<workflow>/`). */
export const workflowFolders = (def: WorkflowDefinition) => [def.dir, join(WORKFLOW_CODE_DIR, def.manifest.name)];

/** How long a burst of file events (an editor's save writes several) is gathered before the run starts. */
const SETTLE_MS = 300;

/**
 * Run this command line without `--watch` now and after every change under `dirs`; never returns.
 * @param dirs the workflow's definition folder (and its code folder, when it has one)
 */
export function watchAndRerun(dirs: readonly string[]): Promise<never> {
  const entry = join(PACKAGE_ROOT, 'bin', 'stepwise.mjs');
  const args = process.argv.slice(2).filter((a) => a !== '--watch');
  let child: ChildProcess | undefined;
  let again = false;
  let timer: NodeJS.Timeout | undefined;
  const start = () => {
    again = false;
    child = spawn(process.execPath, [entry, ...args], { stdio: 'inherit' });
    child.on('exit', () => {
      child = undefined;
      process.stderr.write(
        `stepwise: watching ${dirs.map((d) => relative(process.cwd(), d) || '.').join(', ')} for changes (Ctrl-C stops)\n`,
      );
      if (again) start();
    });
  };
  for (const dir of dirs.filter((d) => existsSync(d)))
    watch(dir, { recursive: true }, (_event, file) => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        process.stderr.write(
          `stepwise: ${file ? join(relative(process.cwd(), dir), String(file)) : relative(process.cwd(), dir)} changed, running again\n`,
        );
        if (child) again = true;
        else start();
      }, SETTLE_MS);
    });
  start();
  return new Promise<never>(() => undefined);
}
