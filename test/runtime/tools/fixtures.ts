/** Shared by the tools, event-log and ingress tests: the fixture's tools, a tool context and tables on DynamoDB Local. */
import {
  CreateTableCommand,
  DynamoDBClient,
  type StreamSpecification,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import type { InboundEmail } from '../../../src/definitions/workflow/inbound-email.ts';
import { documentClient } from '../../../src/dynamodb.ts';
import { dynamoIdempotencyStore } from '../../../src/runtime/tools/once.ts';
import { createToolbox, type ToolboxOptions } from '../../../src/runtime/tools/toolbox.ts';
import type { CallContext, ToolDefinition } from '../../../src/runtime/tools/types.ts';
import lookupCase from '../../fixtures/project/lambdas/workflows/case-desk/tools/lookup-case.ts';
import openCase from '../../fixtures/project/lambdas/workflows/case-desk/tools/open-case.ts';
import sendEmail from '../../fixtures/project/lambdas/workflows/case-desk/tools/send-email.ts';

/**
 * The tool modules of the fixture project's case-desk workflow, as the plugin loader finds them: a read tool
 * (`lookup_case`), a side-effecting one remembered per step (`open_case`) and the engine's `send_email`.
 */
export const DESK_TOOLS = {
  lookup_case: lookupCase,
  open_case: openCase,
  send_email: sendEmail,
} as const satisfies Record<string, ToolDefinition>;

/** A tool with its adapters replaced by test doubles (its `connect` returns `ports`). */
export const withPorts = (tool: ToolDefinition, ports: unknown): ToolDefinition => ({ ...tool, connect: () => ports });

/**
 * A toolbox over `tools` for tests that switch idempotency off (`POWERTOOLS_IDEMPOTENCY_DISABLED`): its store is never
 * called.
 */
export const toolboxWithoutIdempotency = (tools: ToolDefinition[], opts: ToolboxOptions = {}) =>
  createToolbox(tools, {
    idempotency: dynamoIdempotencyStore(new DynamoDBClient({ region: 'us-east-1' }), 'unused'),
    ...opts,
  });

/** The verified ingress record of the fixture's valid.eml. */
export const EMAIL: InboundEmail = {
  id: 'ses-1',
  messageId: '<fixture.valid.10001@mail.example.org>',
  from: 'nora.kent@example.org',
  fromName: 'Nora Kent',
  to: ['cases@dev.desk.example.com'],
  subject: 'Desk lamp broken again - C-10001',
  receivedAt: '2026-03-02T09:14:03.000Z',
  bodyChars: 352,
};

export const toolContext = (step: string, email: InboundEmail = EMAIL, execution = 'email-1'): CallContext => ({
  workflow: 'case-desk',
  step,
  execution: { id: `arn:aws:states:us-east-1:000000000000:execution:case-desk:${execution}`, name: execution },
  input: { email },
});

/** A project-shaped table (string `pk`/`sk`, on demand), optionally with a TTL attribute and a stream. */
export async function createTable(
  client: DynamoDBClient,
  name: string,
  ttlAttribute?: string,
  stream?: StreamSpecification,
): Promise<string> {
  await client.send(
    new CreateTableCommand({
      TableName: name,
      KeySchema: [
        { AttributeName: 'pk', KeyType: 'HASH' },
        { AttributeName: 'sk', KeyType: 'RANGE' },
      ],
      AttributeDefinitions: [
        { AttributeName: 'pk', AttributeType: 'S' },
        { AttributeName: 'sk', AttributeType: 'S' },
      ],
      BillingMode: 'PAY_PER_REQUEST',
      ...(stream && { StreamSpecification: stream }),
    }),
  );
  if (ttlAttribute)
    await client.send(
      new UpdateTimeToLiveCommand({
        TableName: name,
        TimeToLiveSpecification: { AttributeName: ttlAttribute, Enabled: true },
      }),
    );
  return name;
}

/** Every item of `table`, read consistently. */
export const scanTable = async (client: DynamoDBClient, table: string): Promise<Record<string, any>[]> =>
  (await documentClient(client).send(new ScanCommand({ TableName: table, ConsistentRead: true }))).Items ?? [];
