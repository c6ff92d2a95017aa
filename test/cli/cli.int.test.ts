/**
 * The CLI's promises for scripts: a version, one-line usage errors, JSON errors with --json, no silent REJECTED for a
 * missing input.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { copyFixtureProject } from '../support/fixture-project.ts';
import { run, stepwise } from '../support/project-copy.ts';
import { useTempDirs } from '../support/tmp.ts';

// The CLI as installed (compiled), in a copy of the fixture project: a start costs no tsx.
const tempDir = useTempDirs('stepwise-cli-');
let dir = '';
beforeAll(() => {
  dir = copyFixtureProject(tempDir(), { built: true });
});
const cli = (...args: string[]) => stepwise(dir, ...args);

describe('the stepwise CLI', () => {
  it('prints its version', async () => {
    const { code, out } = await cli('--version');
    expect(code).toBe(0);
    expect(out.trim()).toMatch(/^\d+\.\d+\.\d+$/);
  });

  it('reports a usage error in one line with exit code 2, and as JSON with --json', async () => {
    const plain = await cli('run');
    expect(plain.code).toBe(2);
    expect(plain.err).toBe("stepwise: missing required argument 'workflow' (see stepwise run --help)\n");
    const json = await cli('eval', '--bogus', '--json');
    expect(json.code).toBe(2);
    expect(JSON.parse(json.out)).toEqual({
      error: { type: 'UsageError', message: expect.stringContaining("unknown option '--bogus'") },
    });
  });

  it('refuses a missing input file or an empty folder with exit 1 before anything runs', async () => {
    const missing = await cli('run', 'case-desk', '--email', 'no-such.eml', '--json');
    expect(missing.code).toBe(1);
    expect(JSON.parse(missing.out)).toEqual({
      error: { type: 'InvalidInputError', message: 'input not found: no-such.eml' },
    });
    mkdirSync(join(dir, 'empty'));
    const empty = await cli('run', 'case-desk', '--email', 'empty');
    expect(empty.code).toBe(1);
    expect(empty.err).toBe('stepwise: no inputs in empty (looked for *.eml)\n');
  });

  it("suggests the nearest command for a mistyped one, and lists them, the project's own included, for anything else", async () => {
    const typo = await cli('valdate');
    expect(typo.code).toBe(2);
    expect(typo.err).toBe('stepwise: unknown command "valdate" (did you mean "stepwise validate"?)\n');
    const bogus = await cli('bogus');
    expect(bogus.code).toBe(2);
    expect(bogus.err).toMatch(
      /^stepwise: unknown command "bogus" \(commands: demo, eval, .*, member, new, .*, studio, synth, validate\)\n$/,
    );
  });

  it('colours its output on a terminal only, and never with NO_COLOR', async () => {
    const colored = await run(dir, 'env', 'FORCE_COLOR=1', process.execPath, 'bin/stepwise.mjs', 'validate', 'nope');
    expect(colored.err.startsWith('\u001b[31mstepwise:\u001b[39m ')).toBe(true);
    const plain = await run(
      dir,
      'env',
      'FORCE_COLOR=1',
      'NO_COLOR=1',
      process.execPath,
      'bin/stepwise.mjs',
      'validate',
      'nope',
    );
    expect(plain.err.startsWith('stepwise: ')).toBe(true);
    // Not a terminal (a pipe, as here): no colour.
    expect((await cli('validate', 'nope')).err.startsWith('stepwise: ')).toBe(true);
  });

  it('refuses an unknown workflow in one line, naming the known ones', async () => {
    const { code, err } = await cli('validate', 'nope');
    expect(code).toBe(1);
    expect(err).toMatch(
      /^stepwise: statemachines\/nope: \(folder\): unknown workflow "nope" \(known: case-desk, checkpoint-review, consensus-pick, reply-wait\)\n$/,
    );
  });
});
