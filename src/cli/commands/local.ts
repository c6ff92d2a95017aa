import type { Command } from 'commander';
import {
  idleMinutes,
  localServiceDir,
  type ServiceStatus,
  serviceStatus,
  startLocalService,
  stopLocalService,
} from '../../local/cloud/local-service.ts';
import { withExamples } from '../help.ts';
import { action, printJson } from '../output.ts';

function statusText(status: ServiceStatus): string {
  if (!status.running) return `local service: not running (${status.dir})\n`;
  return (
    `local service: running, DynamoDB Local at ${status.endpoint} (pid ${status.pid}, since ${status.startedAt}), ` +
    `${status.leases} commands using it, stops after ${status.idleMinutes} idle minutes\n`
  );
}

export function register(program: Command): void {
  const local = program
    .command('local')
    .description(
      'The warm local service: one DynamoDB Local that `run`, `eval`, `replay`, `resume`, `studio` and `demo` reuse ' +
        'instead of starting their own. The first command starts it; it stops after STEPWISE_LOCAL_IDLE_MINUTES ' +
        '(default 15) unused. STEPWISE_LOCAL_SERVICE=off makes every command start an emulator of its own.',
    );
  withExamples(local, ['stepwise local status --json', 'stepwise local start', 'stepwise local stop']);
  const status = local
    .command('status')
    .description('Whether the service runs, where, and how many commands use it')
    .option('--json', 'print { running, dir, pid?, endpoint?, startedAt?, idleMinutes?, leases? }, nothing else');
  withExamples(status, ['stepwise local status', 'stepwise local status --json']);
  status.action(
    action(async (opts: { json?: boolean }) => {
      const now = await serviceStatus();
      if (opts.json) printJson(now);
      else process.stdout.write(statusText(now));
    }),
  );
  const start = local
    .command('start')
    .description(`Start the service unless it runs (it stops after ${idleMinutes()} idle minutes)`)
    .option('--json', 'print the status as JSON, nothing else');
  withExamples(start, ['stepwise local start', 'stepwise local start --json']);
  start.action(
    action(async (opts: { json?: boolean }) => {
      const status = await startLocalService();
      if (opts.json) printJson(status);
      else process.stdout.write(statusText(status));
    }),
  );
  const stop = local
    .command('stop')
    .description('Stop the service (the commands using it get up to 8 s to finish)')
    .option('--json', 'print { stopped, dir }, nothing else');
  withExamples(stop, ['stepwise local stop', 'stepwise local stop --json']);
  stop.action(
    action(async (opts: { json?: boolean }) => {
      const stopped = await stopLocalService();
      if (opts.json) printJson({ stopped, dir: localServiceDir() });
      else
        process.stdout.write(
          stopped ? 'local service: stopped\n' : `local service: not running (${localServiceDir()})\n`,
        );
    }),
  );
}
