/**
 * The shell commands of the README and the docs, and how the docs tests run them: every command a
 * reader can run offline is run, in document order, in a copy of the project; the others are
 * named here with the reason they are not.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { codeBlocks, markdownFiles, readMarkdown } from './markdown.ts';

export interface DocCommand {
  /** Where it is written first. */
  file: string;
  /** As written (without a trailing `# comment`). */
  command: string;
}

/** Every command line of the `bash`/`sh` blocks of `files`, first occurrence only, in order. */
export function docCommands(files: readonly string[] = markdownFiles()): DocCommand[] {
  const seen = new Set<string>();
  const out: DocCommand[] = [];
  for (const file of files)
    for (const block of codeBlocks(readMarkdown(file)).filter((b) => ['bash', 'sh', 'shell'].includes(b.lang ?? '')))
      for (const raw of block.value.split('\n')) {
        const command = raw.replace(/\s+#\s.*$/, '').trim();
        // `npx stepwise x` and the help examples' `stepwise x` are one command.
        const key = command.replace(/^npx /, '');
        if (!command || command.startsWith('#') || seen.has(key)) continue;
        seen.add(key);
        out.push({ file, command });
      }
  return out;
}

/** Why a command is not run by the tests (undefined: it is run). */
export function notRun(command: string): string | undefined {
  if (
    /^aws /.test(command) ||
    /\bcdk (bootstrap|deploy)\b/.test(command) ||
    /--aws\b|--model bedrock|\bregistry import\b|\bagent-vectors\b/.test(command)
  )
    return 'needs an AWS account';
  if (/--model openai\b/.test(command)) return 'needs an OpenAI-compatible model server';
  if (/--replay\b|--compare runs\//.test(command))
    return 'needs the recordings and runs that the real-model commands before it make';
  if (/--prompt \S+=/.test(command)) return "needs the step file's git history (the copy the tests run in has none)";
  if (/^npm (test|run (test:\S+|bench|load))\b/.test(command))
    return 'runs the test suite, a benchmark or a load run itself (CI runs the suite)';
  if (/--otlp\b|^docker run\b/.test(command))
    return 'needs an OpenTelemetry collector (test/local/sessions/mcp-otlp.int.test.ts runs one)';
  if (/\bstepwise mcp pull\b/.test(command))
    return 'needs an MCP server (test/local/sessions/mcp-otlp.int.test.ts runs one)';
  if (/^(npx )?stepwise local (start|stop)\b/.test(command))
    return "starts or stops the background service the user's commands share (test/local/cloud/local-service.int.test.ts runs them on one of its own)";
  if (/^(npx )?stepwise studio\b/.test(command))
    return 'serves until stopped (the Studio tests start it: test/cli/studio/)';
  if (/^npm (pack|publish)\b|--install\b|\.tgz\b|&& npm install\b/.test(command))
    return 'packs or installs the package (the package test does: test/package/)';
  if (/<[a-z][a-z-]*>/.test(command)) return "names a placeholder (<workflow>) for the reader's own workflow";
  return undefined;
}

/**
 * The workflow the help examples name: the one a project `stepwise new` makes starts with, which the repository's
 * project does not have. The tests add it to the copy with `stepwise init` before the first command that names it
 * (unless that command is the `init` itself).
 */
export const SCAFFOLDED_WORKFLOW = 'support-desk';

/** Whether `command` needs {@link SCAFFOLDED_WORKFLOW} in the copy at `dir` first. */
export const needsScaffold = (command: string, dir: string): boolean =>
  new RegExp(`(?<![\\w-])${SCAFFOLDED_WORKFLOW}(?![\\w-])`).test(command) &&
  !new RegExp(`\\binit ${SCAFFOLDED_WORKFLOW}\\b`).test(command) &&
  !existsSync(join(dir, 'statemachines', SCAFFOLDED_WORKFLOW));

/**
 * The command as the test runs it in the copy: `stepwise` / `npx stepwise` through the copy's own
 * bin (npx would find the original project's, through the linked node_modules), the install of the
 * Quick start left to CI, and `EXECUTION` (a placeholder of the help examples) replaced by an
 * execution of the copy: the newest paused one for `resume`, the newest stored one otherwise (for
 * `--from <step name>`, the newest that ran that step: a step name belongs to one workflow).
 */
export function runnable(command: string, dir: string): string {
  const step = /--from (\S*[A-Za-z]\S*)/.exec(command)?.[1]; // a step name, not an index
  const newest = (folder: string) => {
    const path = join(dir, '.stepwise', folder);
    const files = existsSync(path)
      ? readdirSync(path).filter(
          (f) => f.endsWith('.json') && (!step || readFileSync(join(path, f), 'utf8').includes(JSON.stringify(step))),
        )
      : [];
    return (
      files
        .sort((a, b) => statSync(join(path, b)).mtimeMs - statSync(join(path, a)).mtimeMs)[0]
        ?.slice(0, -'.json'.length) ?? 'EXECUTION'
    );
  };
  return command
    .replace(/^npm install && /, '')
    .replace(/^(npx )?stepwise /, 'node bin/stepwise.mjs ')
    .replace(/\bEXECUTION\b/, () =>
      newest(command.includes(' resume ') || command.startsWith('stepwise resume') ? 'pauses' : 'executions'),
    );
}
