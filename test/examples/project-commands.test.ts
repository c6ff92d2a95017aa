/**
 * The example project's own commands (`lambdas/workflows/<workflow>/cli.ts`) follow the CLI's conventions like the
 * built-in ones (test/cli/conventions.test.ts): `--json`, an Examples section, `--env` where they run an
 * environment's stack, `--profile` and `--region` where they call AWS.
 */
import type { Command } from 'commander';
import { beforeAll, describe, expect, it } from 'vitest';
import { examplesOf } from '../../src/cli/help.ts';
import { createProgram } from '../../src/cli/program.ts';
import { commandLeaves, longFlags } from '../support/commands.ts';

let commands: Map<string, Command>;

beforeAll(async () => {
  commands = commandLeaves(await createProgram());
});

/** The commands the examples add: the lead lifecycle's alias, the warranty registry import, the agent vectors. */
const OWN = ['lead replay', 'lead show', 'lead export', 'lead report', 'registry import', 'agent-vectors'];
const ENVIRONMENT = ['lead replay', 'lead show', 'lead report'];
const AWS = ['registry import', 'lead show', 'lead report'];

describe("the example project's own commands", () => {
  it('are all there, each with --json and an Examples section', () => {
    for (const name of OWN) {
      expect(commands.has(name), name).toBe(true);
      expect(longFlags(commands.get(name)!), name).toContain('--json');
      expect(examplesOf(commands.get(name)!).length, name).toBeGreaterThan(0);
    }
  });

  it.each(ENVIRONMENT)('%s takes --env (default dev)', (name) => {
    expect(commands.get(name)!.options.find((o) => o.long === '--env')?.defaultValue).toBe('dev');
  });

  it.each(AWS)('%s takes --profile and --region', (name) => {
    expect(longFlags(commands.get(name)!)).toEqual(expect.arrayContaining(['--profile', '--region']));
  });
});
