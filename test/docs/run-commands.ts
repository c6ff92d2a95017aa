/** Runs the docs' commands of some pages in a copy of the project and checks what matters of each output. */
import { beforeAll, describe, expect, it } from 'vitest';
import { copyBuiltProject } from '../support/built-package.ts';
import { type Ran, run } from '../support/project-copy.ts';
import { useTempDirs } from '../support/tmp.ts';
import { docCommands, needsScaffold, notRun, runnable, SCAFFOLDED_WORKFLOW } from './commands.ts';

/**
 * What a command's output must show, beyond exit code 0: JSON where `--json` is asked for, and the lines the docs
 * quote.
 */
function checkOutput(command: string, { out }: Ran): void {
  if (/--json\b/.test(command) && !/--out\b/.test(command))
    expect(() => JSON.parse(out), `${command}: stdout is JSON`).not.toThrow();
  if (/ validate support-desk$/.test(command))
    expect(out).toBe('✓ support-desk: 4 steps, 1 tools, 4 offline rules, 1 eval cases\n');
  if (/ graph \S+$/.test(command)) expect(out).toMatch(/^stateDiagram-v2\n/);
  if (/ eval \S+$/.test(command)) expect(out).toMatch(/\n\d+ passed, 0 failed, \d+ total; model: offline/);
  if (/^npm run demo$/.test(command))
    expect(out).toMatch(
      /^Stepwise demo: the sample inputs of 4 workflows: investigation \(5 input files\), order-support \(5\), tool-loop \(2\), warranty-email \(7\)/,
    );
  if (/ lead replay /.test(command) && !/--json/.test(command)) expect(out).toMatch(/^lead-[a-z-]+: \S+ \(/m);
}

/** One test per command of `pages` (README.md, docs/...), in their order, in one copy of the project. */
export function runDocCommands(label: string, pages: (file: string) => boolean): void {
  const tempDir = useTempDirs('stepwise-doc-commands-');
  const commands = docCommands().filter((c) => pages(c.file));
  let dir: string;
  // The compiled CLI, as installed: each of the ~60 commands starts in 0.1 s instead of 2 s through tsx.
  beforeAll(() => {
    dir = copyBuiltProject(tempDir());
  });

  describe(`the shell commands of ${label}`, () => {
    it('are there', () => expect(commands.length).toBeGreaterThan(5));

    for (const { file, command } of commands) {
      const why = notRun(command);
      if (why) it.skip(`${command} (${file}): not run, ${why}`, () => undefined);
      else
        it(`${command} (${file})`, { timeout: 300_000 }, async () => {
          if (needsScaffold(command, dir)) {
            const init = await run(dir, 'bash', '-c', runnable(`stepwise init ${SCAFFOLDED_WORKFLOW}`, dir));
            expect(init.code, init.err).toBe(0);
          }
          const ran = await run(dir, 'bash', '-c', runnable(command, dir));
          expect(ran.code, `${command}\n${ran.err.slice(-2000)}`).toBe(0);
          checkOutput(command, ran);
        });
    }
  });
}
