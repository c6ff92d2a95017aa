/**
 * Deployed executions in the local state: a `GetExecutionHistory` response (the JSON the AWS CLI
 * prints for `aws stepfunctions get-execution-history`, or read by ARN with the SFN client) becomes
 * an `ExecutionRecord` under `.stepwise/imports/`, read by Studio and `stepwise replay` like a local
 * one, and forkable locally. Listing deployed executions is read-only (`ListStateMachines`,
 * `ListExecutions`), with the caller's credentials.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import {
  type HistoryEvent,
  ListExecutionsCommand,
  ListStateMachinesCommand,
  type SFNClient,
} from '@aws-sdk/client-sfn';
import * as z from 'zod';
import { workflowStackName, workflowStateMachineName } from '../../cdk/names.ts';
import { InvalidInputError } from '../../core/errors.ts';
import { listWorkflows } from '../../definitions/workflow/loader.ts';
import { loadProjectConfig } from '../../project/config.ts';
import {
  type ExecutionRecord,
  type ExecutionStatus,
  parseExecutionArn,
  readAwsExecution,
  recordFile,
  summarizeExecution,
} from './history.ts';

/**
 * A timestamp as the API and the CLI print it: an ISO string (CLI v2), epoch seconds (CLI v1,
 * `cli_timestamp_format = none`) or epoch milliseconds.
 */
const Timestamp = z.union([
  z.iso.datetime({ offset: true }).transform((v) => new Date(v)),
  z.number().transform((v) => new Date(v < 1e11 ? v * 1000 : v)),
]);

/** `GetExecutionHistory` output (every page's events in one list), optionally with the execution's ARN beside them. */
export const ExecutionHistoryFileSchema = z.object({
  executionArn: z.string().optional(),
  events: z
    .array(
      z.looseObject({
        id: z.number().int().positive(),
        previousEventId: z.number().int().nonnegative().optional(),
        type: z.string().min(1),
        timestamp: Timestamp,
      }),
    )
    .min(1, 'no events'),
  nextToken: z.string().optional(),
});

/**
 * An execution record of a `GetExecutionHistory` response.
 * @param executionArn the execution's ARN: the response does not carry it (a file may, as `executionArn`).
 * @throws InvalidInputError for anything that is not such a response (naming the field), or a missing or malformed ARN.
 */
export function executionFromHistory(json: unknown, executionArn?: string): ExecutionRecord {
  const parsed = ExecutionHistoryFileSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new InvalidInputError(
      `not a GetExecutionHistory response: ${issue.path.join('.') || '(root)'}: ${issue.message}`,
    );
  }
  const arn = executionArn || parsed.data.executionArn;
  if (!arn)
    throw new InvalidInputError(
      'the execution ARN is missing: GetExecutionHistory does not return it, give it with the file',
    );
  if (parsed.data.nextToken)
    throw new InvalidInputError(
      'the history has more pages (nextToken): fetch them all (the AWS CLI does unless --max-items is given)',
    );
  if (!parsed.data.events.some((e) => e.type === 'ExecutionStarted'))
    throw new InvalidInputError('not a whole history: no ExecutionStarted event');
  return summarizeExecution(arn, parsed.data.events as HistoryEvent[]);
}

/** Store an imported execution in `dir` (imports); returns the stored record. */
export function storeImported(
  record: ExecutionRecord,
  dir: string,
  from: 'file' | 'aws',
  now: Date = new Date(),
): ExecutionRecord {
  const stored = { ...record, imported: { from, at: now.toISOString() } };
  mkdirSync(dir, { recursive: true });
  writeFileSync(recordFile(record.name, dir), JSON.stringify(stored, null, 2) + '\n');
  return stored;
}

/** Read a deployed execution by ARN (`GetExecutionHistory`, every page) and store it in `dir`. */
export async function importFromAws(executionArn: string, client: SFNClient, dir: string): Promise<ExecutionRecord> {
  parseExecutionArn(executionArn);
  return storeImported(await readAwsExecution(executionArn, client), dir, 'aws');
}

/** A deployed execution of one of the project's workflows, as `ListExecutions` reports it. */
export interface DeployedExecution {
  executionArn: string;
  name: string;
  workflow: string;
  stateMachine: string;
  status: ExecutionStatus | 'PENDING_REDRIVE';
  startDate: string;
  stopDate?: string;
}

/** The deployed state machine names of `workflows` in the environments `envs`: `<stack>-<workflow>`. */
export function deployedStateMachineNames(workflows: readonly string[], envs: readonly string[]): Map<string, string> {
  return new Map(
    workflows.flatMap((workflow) =>
      envs.map((env) => [workflowStateMachineName(workflowStackName(workflow, env), workflow), workflow] as const),
    ),
  );
}

/**
 * The latest deployed executions of the project's workflows (newest first, at most `perStateMachine`
 * of each): the state machines are found by their readable names.
 */
export async function listDeployedExecutions(client: SFNClient, perStateMachine = 50): Promise<DeployedExecution[]> {
  const names = deployedStateMachineNames(listWorkflows(), Object.keys((await loadProjectConfig()).environments));
  const machines: { arn: string; name: string }[] = [];
  let nextToken: string | undefined;
  do {
    const page = await client.send(new ListStateMachinesCommand({ nextToken, maxResults: 1000 }));
    for (const m of page.stateMachines ?? [])
      if (m.name && m.stateMachineArn && names.has(m.name)) machines.push({ arn: m.stateMachineArn, name: m.name });
    nextToken = page.nextToken;
  } while (nextToken);
  const all: DeployedExecution[] = [];
  for (const machine of machines) {
    const page = await client.send(
      new ListExecutionsCommand({ stateMachineArn: machine.arn, maxResults: perStateMachine }),
    );
    for (const e of page.executions ?? [])
      all.push({
        executionArn: e.executionArn!,
        name: e.name!,
        workflow: names.get(machine.name)!,
        stateMachine: machine.name,
        status: e.status as DeployedExecution['status'],
        startDate: new Date(e.startDate!).toISOString(),
        ...(e.stopDate && { stopDate: new Date(e.stopDate).toISOString() }),
      });
  }
  return all.sort((a, b) => b.startDate.localeCompare(a.startDate));
}
