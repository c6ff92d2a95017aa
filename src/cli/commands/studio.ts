import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import { otlpTracesUrl } from '../../local/records/otlp.ts';
import { withExamples } from '../help.ts';
import { action } from '../output.ts';

interface StudioFlags {
  port: number;
  aws?: boolean;
  profile?: string;
  region?: string;
  verbose?: boolean;
  json?: boolean;
  otlp?: string;
}

const port = (value: string) => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new InvalidArgumentError(`not a port: ${value}`);
  return n;
};

export function register(program: Command): void {
  const command = program
    .command('studio')
    .description(
      'Open Stepwise Studio, a local web UI over this project: each workflow’s graph with its step statistics, the local ' +
        'executions (live while they run), one execution step by step (decision, model request, tokens and cost, tool calls, ' +
        'raw events), paused checkpoints to approve or reject, replay and fork from any step, imported deployed executions, ' +
        'and eval runs. Served on 127.0.0.1 only; stops with Ctrl+C.',
    )
    .option('--port <port>', 'the port on 127.0.0.1 (0: any free port)', port, 4319)
    .option('--aws', 'also list deployed executions and import them by ARN (read-only, with your AWS credentials)')
    .option('--profile <profile>', 'the AWS profile for --aws')
    .option('--region <region>', 'the AWS region for --aws (default: the profile’s or AWS_REGION)')
    .option('--verbose', 'show the step handlers’ logs of runs, forks and resumes')
    .option(
      '--otlp <url>',
      'export each run, fork and resume as an OpenTelemetry trace over OTLP/HTTP to this collector (default: OTEL_EXPORTER_OTLP_ENDPOINT)',
    )
    .option('--json', 'print { url, prebuilt, aws } as one JSON line once Studio listens (for scripts that open it)');
  withExamples(command, [
    'stepwise studio',
    'stepwise studio --port 0 --json',
    'stepwise studio --aws --profile prod-readonly --region eu-west-1',
  ]);
  command.action(
    action(async (flags: StudioFlags) => {
      // The server, the UI bundler and the local runtime load only when Studio starts.
      const { startStudio } = await import('../studio/server.ts');
      const aws = flags.aws
        ? new (await import('@aws-sdk/client-sfn')).SFNClient({
            ...(flags.region && { region: flags.region }),
            ...(flags.profile && { profile: flags.profile }),
          })
        : undefined;
      const studio = await startStudio({
        port: flags.port,
        aws,
        logLevel: flags.verbose ? 'INFO' : 'SILENT',
        otlp: otlpTracesUrl(flags.otlp),
      });
      if (flags.json)
        process.stdout.write(`${JSON.stringify({ url: studio.url, prebuilt: studio.prebuilt, aws: Boolean(aws) })}\n`);
      else
        process.stdout.write(
          `Stepwise Studio: ${studio.url}${studio.prebuilt ? '' : ' (UI bundled from source)'}${aws ? ', with deployed executions (--aws)' : ''}\n`,
        );
      await new Promise<void>((resolve) => {
        const stop = () => void studio.close().then(resolve);
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
      });
    }),
  );
}
