/**
 * Recorded executions of the engine's fixture project (test/fixtures/project) that the Studio, fork and history tests
 * read: local ones (test/fixtures/executions, made by record.ts there) and a deployed one (test/fixtures/aws).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../../src/core/paths.ts';
import { type ExecutionRecord, readLocalExecution } from '../../src/local/records/history.ts';
import { executionFromHistory } from '../../src/local/records/import.ts';

/** The folder of the recorded local executions (`<name>.json`). */
export const EXECUTIONS_FIXTURE_DIR = join(PACKAGE_ROOT, 'test/fixtures/executions');

/** `aws stepfunctions get-execution-history` of a deployed case-desk execution (see make-history.ts beside it). */
export const AWS_FIXTURE = join(PACKAGE_ROOT, 'test/fixtures/aws/case-desk-execution-history.json');
/** Its execution ARN (the response does not carry it). */
export const AWS_ARN =
  'arn:aws:states:eu-west-1:210987654321:execution:Stepwise-CaseDesk-dev-case-desk:email-c2a9f0d84be17e55a3016d4f9b2e8c7710ad3e64';
/** Its execution name, the ARN's last part. */
export const AWS_EXECUTION = AWS_ARN.split(':').at(-1)!;

/** The recordings by name: a case-desk email, a consensus-pick vote, a checkpoint-review resumed, a deployed case-desk. */
export type Recording = 'case-desk-valid' | 'consensus-pick-vote' | 'checkpoint-review-resumed' | 'aws-case-desk';

/**
 * A recorded execution by fixture name: `case-desk-valid` (`valid.eml`: fast path, code step, LLM steps with tool
 * calls, a reply), `consensus-pick-vote` (consensus waves and a counter), `checkpoint-review-resumed` (paused at its
 * checkpoint and resumed), or `aws-case-desk` (the deployed one).
 */
export function recordedExecution(name: Recording): ExecutionRecord {
  if (name === 'aws-case-desk') return executionFromHistory(JSON.parse(readFileSync(AWS_FIXTURE, 'utf8')), AWS_ARN);
  return readLocalExecution(name, EXECUTIONS_FIXTURE_DIR);
}
