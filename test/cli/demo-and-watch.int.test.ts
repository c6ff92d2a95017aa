/**
 * `stepwise demo` says what it runs, prints one line per input and leaves no paused execution
 * behind; `run --watch` and `eval --watch` run again when a definition of the workflow changes.
 * Each in a throwaway copy of the fixture project.
 */
import { spawn } from 'node:child_process';
import { appendFileSync, existsSync, readdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { copyFixtureProject } from '../support/fixture-project.ts';
import { copyEnv, stepwise } from '../support/project-copy.ts';
import { useTempDirs } from '../support/tmp.ts';

const tempDir = useTempDirs('stepwise-demo-');
let dir: string;
beforeAll(() => {
  dir = copyFixtureProject(tempDir(), { built: true });
});

describe('stepwise demo', () => {
  it('says exactly what it runs, prints one line per input, and keeps no paused execution', {
    timeout: 180_000,
  }, async () => {
    const demo = await stepwise(dir, 'demo', 'checkpoint-review');
    expect(demo.code, demo.err).toBe(0);
    const lines = demo.out.trimEnd().split('\n');
    expect(lines[0]).toBe(
      'Stepwise demo: the sample inputs of 1 workflow: checkpoint-review (2 input files), through the synthesized ASL on the local runtime (DynamoDB Local), model: offline stand-in (deterministic rules, NOT an LLM).',
    );
    const inputs = lines.filter((l) => /^ {2}\S+\.json +(SUCCEEDED|FAILED|PAUSED|REJECTED)/.test(l));
    expect(inputs).toHaveLength(2);
    expect(inputs.find((l) => l.includes('checkpoint.json'))).toMatch(/PAUSED/);
    expect(inputs.find((l) => l.includes('quick.json'))).toMatch(/SUCCEEDED/);
    // A line per input, the workflow's header, the paused one's note and the closing lines: nothing else.
    expect(lines.length).toBeLessThanOrEqual(2 + 8);
    const pauses = join(dir, '.stepwise', 'pauses');
    expect(existsSync(pauses) ? readdirSync(pauses) : []).toEqual([]);
  });

  it('prints every result as JSON with --json', { timeout: 180_000 }, async () => {
    const demo = await stepwise(dir, 'demo', 'case-desk', '--json');
    expect(demo.code, demo.err).toBe(0);
    const { workflows } = JSON.parse(demo.out);
    expect(workflows).toHaveLength(1);
    expect(workflows[0].workflow).toBe('case-desk');
    // Mail the ingress refuses is a result too.
    expect(workflows[0].results.map((r: { file: string; status: string }) => [basename(r.file), r.status])).toEqual([
      ['auto-reply.eml', 'REJECTED'],
      ['closed.eml', 'SUCCEEDED'],
      ['missing-ref.eml', 'SUCCEEDED'],
      ['not-found.eml', 'SUCCEEDED'],
      ['out-of-scope.eml', 'SUCCEEDED'],
      ['spam.eml', 'REJECTED'],
      ['valid.eml', 'SUCCEEDED'],
    ]);
  });
});

/** Start `stepwise <args>` in the copy and collect its output until `stop()`. */
function watch(...args: string[]) {
  const child = spawn(process.execPath, ['bin/stepwise.mjs', ...args], {
    cwd: dir,
    env: copyEnv(),
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (err += d));
  const until = async (check: () => boolean, what: string) => {
    for (let waited = 0; !check(); waited += 200) {
      if (waited > 150_000)
        throw new Error(`timed out waiting for ${what}; stdout: ${out.slice(-500)} stderr: ${err.slice(-500)}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  };
  return { output: () => out, errors: () => err, until, stop: () => child.kill('SIGTERM') };
}

const count = (text: string, what: string) => text.split(what).length - 1;

describe('--watch', () => {
  it.each([
    [
      'run',
      ['run', 'consensus-pick', '--input', 'statemachines/consensus-pick/samples/vote.json'],
      '1 input: 1 SUCCEEDED',
    ],
    ['eval', ['eval', 'consensus-pick'], '3 passed, 0 failed, 3 total'],
  ])(
    '%s runs again when a definition under the workflow folder changes',
    { timeout: 360_000 },
    async (_name, args, done) => {
      const w = watch(...args, '--watch');
      try {
        await w.until(() => count(w.output(), done) === 1 && w.errors().includes('watching'), 'the first run');
        appendFileSync(join(dir, 'statemachines/consensus-pick/steps/04-reflect.md'), '\nWork carefully.\n');
        await w.until(() => count(w.output(), done) === 2, 'the run after the change');
        expect(w.errors()).toMatch(
          /stepwise: statemachines\/consensus-pick\/steps\/04-reflect\.md changed, running again/,
        );
      } finally {
        w.stop();
      }
    },
  );
});
