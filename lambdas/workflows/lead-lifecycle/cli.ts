/**
 * `stepwise lead …`: the lead lifecycle example's own alias of `stepwise lifecycle lead-lifecycle …`,
 * registered the way any project adds commands (a `cli.ts` beside its code).
 */
import type { Command } from 'commander';
import { registerLifecycle } from 'stepwise/cli';

export function register(program: Command): void {
  registerLifecycle(
    program
      .command('lead')
      .description(
        'The lead lifecycle: replay events through the local bus and state machine, show leads, report. Same as `stepwise lifecycle lead-lifecycle`.',
      ),
    'lead-lifecycle',
  );
}
