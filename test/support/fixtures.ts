/**
 * Recorded executions the Studio and fork tests read: local ones (test/fixtures/executions) and a deployed one
 * (test/fixtures/aws).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../../src/core/paths.ts';
import { type ExecutionRecord, readLocalExecution } from '../../src/local/records/history.ts';
import { executionFromHistory } from '../../src/local/records/import.ts';

/** `aws stepfunctions get-execution-history` of a deployed warranty-email execution (see make-warranty-history.ts). */
export const AWS_FIXTURE = join(PACKAGE_ROOT, 'test/fixtures/aws/warranty-execution-history.json');
/** Its execution ARN (the response does not carry it). */
export const AWS_ARN =
  'arn:aws:states:eu-west-1:210987654321:execution:Stepwise-WarrantyEmail-dev-warranty-email:email-c2a9f0d84be17e55a3016d4f9b2e8c7710ad3e64';

/**
 * A recorded execution by fixture name: `warranty-valid`, `tool-loop-consensus`, `investigation-resumed`, or
 * `aws-warranty` (the deployed one).
 */
export function recordedExecution(name: string): ExecutionRecord {
  if (name === 'aws-warranty') return executionFromHistory(JSON.parse(readFileSync(AWS_FIXTURE, 'utf8')), AWS_ARN);
  return readLocalExecution(name, join(PACKAGE_ROOT, 'test/fixtures/executions'));
}
