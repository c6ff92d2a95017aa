import { shareDynamoDbLocal } from '../src/local/cloud/dynamodb-connection.ts';
import { ensureDynamoDbLocal } from '../src/local/cloud/dynamodb-local.ts';

/**
 * Fetch the emulator once, then start the one DynamoDB Local of the whole run before any test file starts: every
 * session (and every CLI the tests spawn, through the inherited environment) connects to it with tables of its own.
 */
export default async function setup(): Promise<() => Promise<void>> {
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  await ensureDynamoDbLocal();
  return shareDynamoDbLocal();
}
