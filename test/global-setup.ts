import { ensureDynamoDbLocal } from '../src/local/dynamodb-local.ts';

/** Fetch the DynamoDB Local jar once, before test files start emulators in parallel. */
export default async function setup(): Promise<void> {
  await ensureDynamoDbLocal();
}
