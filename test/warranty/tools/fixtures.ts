/** Shared by the tools, event-log and ingress tests: a tool context and tables on DynamoDB Local. */
import { CreateTableCommand, UpdateTimeToLiveCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { InboundEmail, ToolContext } from '../../../lambdas/tools/types.ts';

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

export const toolContext = (step: string, email: InboundEmail = EMAIL, execution = 'email-1'): ToolContext => ({
  workflow: 'warranty-email',
  step,
  execution: { id: `arn:aws:states:us-east-1:000000000000:execution:warranty-email:${execution}`, name: execution },
  email,
});

/** A project-shaped table (string `pk`/`sk`, on demand), optionally with a TTL attribute. */
export async function createTable(client: DynamoDBClient, name: string, ttlAttribute?: string): Promise<string> {
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
    }),
  );
  if (ttlAttribute)
    await client.send(new UpdateTimeToLiveCommand({ TableName: name, TimeToLiveSpecification: { AttributeName: ttlAttribute, Enabled: true } }));
  return name;
}
