/** The CLI's promises for scripts: a version, one-line usage errors, JSON errors with --json, no silent REJECTED for a missing input. */
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../lambdas/lib/project.ts';
import { stepwise } from '../support/project-copy.ts';

const cli = (...args: string[]) => stepwise(PROJECT_ROOT, ...args);

describe('the stepwise CLI', () => {
  it('prints its version', async () => {
    const { code, out } = await cli('--version');
    expect(code).toBe(0);
    expect(out.trim()).toMatch(/^\d+\.\d+\.\d+$/);
  });

  it('reports a usage error in one line, and as JSON with --json', async () => {
    const plain = await cli('run');
    expect(plain.code).toBe(1);
    expect(plain.err).toBe("stepwise: missing required argument 'workflow' (see stepwise run --help)\n");
    const json = await cli('eval', '--bogus', '--json');
    expect(json.code).toBe(1);
    expect(JSON.parse(json.out)).toEqual({ error: { type: 'UsageError', message: expect.stringContaining("unknown option '--bogus'") } });
  });

  it('refuses a missing input file or an empty folder with exit 1 before anything runs', async () => {
    const missing = await cli('run', 'warranty-email', '--email', 'no-such.eml', '--json');
    expect(missing.code).toBe(1);
    expect(JSON.parse(missing.out)).toEqual({ error: { type: 'InvalidInputError', message: 'input not found: no-such.eml' } });
    const empty = await cli('run', 'warranty-email', '--email', 'lambdas/lib');
    expect(empty.code).toBe(1);
    expect(empty.err).toBe('stepwise: no inputs in lambdas/lib (looked for *.eml)\n');
  });

  it('refuses an unknown workflow in one line, naming the known ones', async () => {
    const { code, err } = await cli('validate', 'nope');
    expect(code).toBe(1);
    expect(err).toMatch(/^stepwise: statemachines\/nope: \(folder\): unknown workflow "nope" \(known: .*warranty-email.*\)\n$/);
  });
});
