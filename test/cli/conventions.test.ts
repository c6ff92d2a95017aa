/**
 * What every command of the CLI follows, read from the commander program itself: `--json` on
 * every command that prints data, an Examples section in every help, `--env` wherever a command
 * synthesizes or runs a deployment environment's stack, `--profile` and `--region` wherever it
 * calls AWS (as the CDK, SAM and AWS CLIs name them). The program is the fixture project's, with its
 * own lifecycle alias (`stepwise member …`, a project command made with `registerLifecycle`).
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

const flags = (name: string) => longFlags(commands.get(name)!);

/** Commands that synthesize or run a stack of an environment. */
const ENVIRONMENT = [
  'synth',
  'run',
  'eval',
  'demo',
  'resume',
  'validate',
  'lifecycle member-journey replay',
  'member replay',
  'member show',
  'member report',
];
/** Commands that call AWS (with --model bedrock, --aws or --table, or always). */
const AWS = [
  'run',
  'eval',
  'demo',
  'resume',
  'history',
  'lifecycle member-journey show',
  'member show',
  'member report',
];

describe('CLI conventions', () => {
  it('knows the commands this test names', () => {
    for (const name of [...ENVIRONMENT, ...AWS]) expect(commands.has(name), name).toBe(true);
  });

  it('has --json on every command (each prints data)', () => {
    for (const [name] of commands) expect(flags(name), name).toContain('--json');
  });

  it('has an Examples section in every help', () => {
    for (const [name, command] of commands) {
      let help = '';
      command.configureOutput({ writeOut: (text) => (help += text) });
      command.outputHelp();
      expect(examplesOf(command).length, name).toBeGreaterThan(0);
      expect(help, name).toMatch(/\nExamples:\n( {2}\$ stepwise .+\n)+\n?$/);
    }
  });

  it.each(ENVIRONMENT)('%s takes --env (default dev)', (name) => {
    expect(commands.get(name)!.options.find((o) => o.long === '--env')?.defaultValue).toBe('dev');
  });

  it.each([
    ['run', ['steps', 'single-prompt']],
    ['eval', ['step', 'single-prompt', 'ab']],
  ])(
    '%s --mode lists the single-prompt agent by its name and takes its old name, monolithic, for it',
    (name, modes) => {
      const mode = commands.get(name)!.options.find((o) => o.long === '--mode')!;
      expect(mode.argChoices).toEqual(modes);
      expect(mode.parseArg!('monolithic', undefined)).toBe('single-prompt');
      expect(mode.parseArg!('single-prompt', undefined)).toBe('single-prompt');
      expect(() => mode.parseArg!('graph', undefined)).toThrow(`Allowed choices are ${modes.join(', ')}.`);
    },
  );

  it.each(AWS)('%s takes --profile and --region', (name) => {
    expect(flags(name)).toEqual(expect.arrayContaining(['--profile', '--region']));
  });
});
