/** Shared by the end-to-end tests: the samples, a fresh copy of one, and reads of the session's tables and outbox. */
import { DynamoDBDocumentClient, ScanCommand } from '@aws-sdk/lib-dynamodb';
import type { WorkflowSession } from '../../../src/local/sessions/workflow-session.ts';
import { readOutbox } from '../../../src/runtime/triggers/email/mail.ts';
import { sample, withHeaders } from '../../runtime/triggers/email/fixtures.ts';

export { SAMPLES_DIR } from '../../runtime/triggers/email/fixtures.ts';

/** A sample under a new Message-ID (so it starts a new execution), optionally with more headers. */
export function freshSample(name: string, messageId: string, add: string[] = []): string {
  return withHeaders(sample(name), { remove: ['message-id'], add: [`Message-ID: <${messageId}>`, ...add] });
}

/** The tickets the session's TicketsTable holds for one execution. */
export async function ticketsOf(session: WorkflowSession, executionName: string): Promise<Record<string, unknown>[]> {
  const doc = DynamoDBDocumentClient.from(session.dynamo.client);
  const { Items = [] } = await doc.send(
    new ScanCommand({ TableName: session.tables.TICKETS_TABLE, ConsistentRead: true }),
  );
  return Items.filter((item) => item.execution === executionName);
}

/** Every mail the session's outbox holds for one execution (what was really sent, including mail a result might not show). */
export const mailsOf = (session: WorkflowSession, executionName: string) =>
  readOutbox(session.outboxFile).filter((mail) => mail.execution === executionName);

/**
 * An eval case that must fail: a claim without a serial number (the agent asks for it, 01 → 03d)
 * whose expectation says the warranty is checked next.
 */
export const WRONG_CASE_YAML = `
scenario_id: deliberately_wrong_001
description: Expects a warranty check for a claim without a serial number - must fail at step 2.
category: missing-info
input:
  email:
    from: sam.lee@example.com
    from_name: Sam Lee
    subject: My headphones stopped working
    body: My headphones are broken, the left side has no sound. Can you repair them under warranty?
  mock_function_responses:
    send_email: { sent: true, to: sam.lee@example.com, messageId: "<reply-w@outbox.local>" }
expected_output:
  expected_steps:
    - step_name: 01-extract-serial
    - step_name: 02-check-warranty
      function_call: check_warranty
`;
