/** Shared by the tools, event-log and ingress tests: a tool context and tables on DynamoDB Local. */
import {
  CreateTableCommand,
  type DynamoDBClient,
  type StreamSpecification,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import checkWarranty from '../../../lambdas/workflows/warranty-email/tools/check-warranty.ts';
import createTicket from '../../../lambdas/workflows/warranty-email/tools/create-ticket.ts';
import sendEmail from '../../../lambdas/workflows/warranty-email/tools/send-email.ts';
import type { InboundEmail } from '../../../src/definitions/workflow/inbound-email.ts';
import type { CallContext, ToolDefinition } from '../../../src/runtime/tools/types.ts';

/** The warranty workflow's tool modules, as the plugin loader finds them. */
export const WARRANTY_TOOLS = {
  check_warranty: checkWarranty,
  create_ticket: createTicket,
  send_email: sendEmail,
} as const satisfies Record<string, ToolDefinition>;

/** A tool with its adapters replaced by test doubles (its `connect` returns `ports`). */
export const withPorts = (tool: ToolDefinition, ports: unknown): ToolDefinition => ({ ...tool, connect: () => ports });

export const EMAIL: InboundEmail = {
  id: 'ses-1',
  messageId: '<CAF7x2q1.valid-warranty.48213@mail.example.org>',
  from: 'maria.lopez@example.org',
  fromName: 'Maria Lopez',
  to: ['claims@dev.warranty.example.com'],
  subject: 'Headphones stopped charging - warranty claim',
  receivedAt: '2026-11-21T09:14:03.000Z',
  bodyChars: 352,
};

export const toolContext = (step: string, email: InboundEmail = EMAIL, execution = 'email-1'): CallContext => ({
  workflow: 'warranty-email',
  step,
  execution: { id: `arn:aws:states:us-east-1:000000000000:execution:warranty-email:${execution}`, name: execution },
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
