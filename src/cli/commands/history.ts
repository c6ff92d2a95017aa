import { SFNClient } from '@aws-sdk/client-sfn';
import type { Command } from 'commander';
import { causeMessage, InvalidInputError } from '../../core/errors.ts';
import { listWorkflows, loadWorkflow } from '../../definitions/workflow/loader.ts';
import { aboutOf, outcomeOf } from '../../local/records/execution-list.ts';
import {
  DEFAULT_HISTORY_DIR,
  type ExecutionRecord,
  readAwsExecution,
  readLocalExecution,
  stateTransitions,
  stepTrail,
  type TrailStep,
} from '../../local/records/history.ts';
import { DEFAULT_PAUSES_DIR, PauseStore } from '../../local/records/pauses.ts';
import { awsOptions } from '../aws-options.ts';
import { withExamples } from '../help.ts';
import { action, printJson } from '../output.ts';

function stepLine(step: TrailStep, index: number): string {
  const retries = step.retries ? ` [${step.retries} ${step.retries === 1 ? 'retry' : 'retries'}]` : '';
  if (step.error) {
    const message = causeMessage(step.error.cause);
    return `${index + 1}. ${step.name} ✗ ${step.error.error}${message ? `: ${message.split('\n')[0]}` : ''}${retries}`;
  }
  const route = step.next ? ` → ${step.next}` : '';
  const reason = step.reason ? ` (${step.reason})` : '';
  return `${index + 1}. ${step.name}${route}${reason}${retries}`;
}

/** `49 ms` under a second, `1.2 s` above. */
export const duration = (ms: number) => (ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`);

/**
 * The readable form of an execution: a header, one line per step (`1. a → b (reason)`), and the
 * failure, if any. A local execution waiting at a checkpoint is `PAUSED` (its history has no end
 * yet, which alone would read as RUNNING), with the state it waits at.
 */
export function formatExecution(record: ExecutionRecord, pausedAt?: string): string {
  const trail = stepTrail(record.events);
  const took = record.stopDate ? ` in ${duration(record.stopDate.getTime() - record.startDate.getTime())}` : '';
  const status = pausedAt ? `PAUSED at ${pausedAt}` : record.status;
  const lines = [
    `${record.name}${record.workflow ? ` (${record.workflow})` : ''} ${status}${took}: ${trail.length} steps, ${stateTransitions(record.events)} state transitions`,
    `  ${record.executionArn}`,
    ...trail.map(stepLine),
  ];
  if (record.error) {
    const message = causeMessage(record.error.Cause);
    lines.push(`${record.status}: ${record.error.Error}${message ? ` - ${message.split('\n')[0]}` : ''}`);
  }
  return lines.join('\n') + '\n';
}

interface HistoryOptions {
  dir: string;
  pauses: string;
  json?: boolean;
  aws?: boolean;
  region?: string;
}

async function readExecution(execution: string, opts: HistoryOptions): Promise<ExecutionRecord> {
  if (!opts.aws) return readLocalExecution(execution, opts.dir);
  if (!execution.startsWith('arn:')) throw new InvalidInputError(`--aws needs an execution ARN, got "${execution}"`);
  // The ARN names the region the execution ran in.
  const client = new SFNClient({ region: opts.region ?? execution.split(':')[3] });
  try {
    return await readAwsExecution(execution, client);
  } catch (e) {
    const error = e as Error;
    if (error.name === 'CredentialsProviderError') {
      throw Object.assign(
        new Error(`no AWS credentials for --aws (set AWS_PROFILE or AWS_ACCESS_KEY_ID): ${error.message}`),
        { name: error.name },
      );
    }
    throw e;
  } finally {
    client.destroy();
  }
}

export function register(program: Command): void {
  const command = program
    .command('history')
    .description('Show the step trail of an execution: local by default (name or ARN), or a deployed one with --aws.')
    .argument('<execution>', 'execution name or ARN (with --aws: the execution ARN)')
    .option('--dir <dir>', 'where local executions are stored', DEFAULT_HISTORY_DIR)
    .option('--pauses <dir>', 'where paused local executions are kept', DEFAULT_PAUSES_DIR)
    .option('--json', 'print the execution record, its step trail and its events as JSON')
    .option('--aws', 'read a deployed execution with GetExecutionHistory (needs AWS credentials)');
  awsOptions(command, 'for --aws', "the execution ARN's region");
  withExamples(command, [
    'stepwise history EXECUTION',
    'stepwise history --aws arn:aws:states:us-east-1:123456789012:execution:Stepwise-SupportDesk-prod-support-desk:question-0123 --profile prod',
  ]);
  command.action(
    action(async (execution: string, opts: HistoryOptions) => {
      const record = await readExecution(execution, opts);
      const paused = opts.aws || record.status !== 'RUNNING' ? undefined : new PauseStore(opts.pauses).get(record.name);
      const status = paused ? 'PAUSED' : record.status;
      const def =
        record.workflow && listWorkflows().includes(record.workflow) ? loadWorkflow(record.workflow) : undefined;
      const outcome = outcomeOf(record, def);
      if (opts.json)
        printJson({
          ...record,
          status,
          about: aboutOf(record.input, def),
          ...(outcome && { outcome }),
          trail: stepTrail(record.events),
          stateTransitions: stateTransitions(record.events),
        });
      else process.stdout.write(formatExecution(record, paused?.state));
    }),
  );
}
