/**
 * The in-process CLI harness shared by the CLI tests: commands run through a fresh commander
 * program, stdout and stderr are captured, and `process.exit` throws instead of exiting.
 */
import { Command } from 'commander';
import { afterEach, beforeEach, expect, vi } from 'vitest';

/** Thrown by the mocked `process.exit`, so a command stops where the real one would exit. */
export class Exit extends Error {
  constructor(readonly code: number | undefined) {
    super(`exit ${code}`);
  }
}

/** What the commands wrote; reset before each test, and assignable (`io.err = ''`) between calls. */
export interface CliOutput {
  out: string;
  err: string;
}

/**
 * Installs, around every test of the calling file, the spies on `process.stdout.write`,
 * `process.stderr.write` and `process.exit`; afterwards restores them and clears `process.exitCode`.
 */
export function useCliCapture(): CliOutput {
  const io: CliOutput = { out: '', err: '' };
  beforeEach(() => {
    io.out = '';
    io.err = '';
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => ((io.out += String(chunk)), true));
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => ((io.err += String(chunk)), true));
    vi.spyOn(process, 'exit').mockImplementation((code) => {
      throw new Exit(code as number | undefined);
    });
  });
  afterEach(() => {
    vi.restoreAllMocks();
    process.exitCode = undefined;
  });
  return io;
}

/** A CLI command module (`src/cli/commands/*.ts`). */
export interface CliCommand {
  register(program: Command): void;
}

/**
 * Run `stepwise <args>` with `commands` registered; returns the exit code: the one given to
 * `process.exit`, else `process.exitCode` when the action returned (0 if unset).
 */
export async function runCli(commands: readonly CliCommand[], ...args: string[]): Promise<number> {
  const program = new Command('stepwise').exitOverride();
  for (const command of commands) command.register(program);
  try {
    await program.parseAsync(args, { from: 'user' });
    return Number(process.exitCode ?? 0);
  } catch (e) {
    if (e instanceof Exit) return e.code ?? 0;
    throw e;
  }
}

/** A one-line error, prefixed like every CLI error. */
export const expectOneLine = (text: string) => expect(text).toMatch(/^stepwise: [^\n]+\n$/);
