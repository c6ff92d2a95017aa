import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DefinitionError, JavaNotFoundError } from '../../../../src/core/errors.ts';
import {
  createTablesFromTemplate,
  findJava,
  parseJavaMajorVersion,
  startDynamoDbLocal,
} from '../../../../src/local/cloud/dynamodb-local.ts';
import { localTableName } from '../../../../src/local/cloud/intrinsics.ts';

describe('Java detection', () => {
  let dir: string;

  /** A JAVA_HOME whose bin/java prints `version` the way java -version does (on stderr). */
  async function fakeJavaHome(name: string, version: string): Promise<string> {
    const home = join(dir, name);
    await mkdir(join(home, 'bin'), { recursive: true });
    await writeFile(join(home, 'bin', 'java'), `#!/bin/sh\necho '${version}' >&2\n`);
    await chmod(join(home, 'bin', 'java'), 0o755);
    return home;
  }

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'stepwise-java-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('parses old and new version strings', () => {
    expect(parseJavaMajorVersion('openjdk version "17.0.15" 2025-04-15')).toBe(17);
    expect(parseJavaMajorVersion('java version "1.8.0_402"')).toBe(8);
    expect(parseJavaMajorVersion('openjdk version "21" 2023-09-19')).toBe(21);
    expect(parseJavaMajorVersion('no version here')).toBeUndefined();
  });

  it('accepts Java 17+ from JAVA_HOME', async () => {
    const home = await fakeJavaHome('jdk21', 'openjdk version "21.0.2" 2024-01-16');
    await expect(findJava({ JAVA_HOME: home })).resolves.toEqual({ java: join(home, 'bin', 'java'), majorVersion: 21 });
  });

  it('refuses an old Java and says how to install a new one', async () => {
    const home = await fakeJavaHome('jdk11', 'openjdk version "11.0.2" 2019-01-15');
    const attempt = findJava({ JAVA_HOME: home });
    await expect(attempt).rejects.toThrow(JavaNotFoundError);
    await expect(attempt).rejects.toThrow(
      /found Java 11[\s\S]*sudo apt-get install -y openjdk-17-jre-headless[\s\S]*JAVA_HOME/,
    );
  });

  it('startDynamoDbLocal fails with the install instructions when there is no Java', async () => {
    const attempt = startDynamoDbLocal({ env: { JAVA_HOME: join(dir, 'missing') } });
    await expect(attempt).rejects.toThrow(JavaNotFoundError);
    await expect(attempt).rejects.toThrow(
      /needs Java 17 or newer \(no ".*missing\/bin\/java" found\)[\s\S]*openjdk-17-jre-headless/,
    );
  });
});

describe('table definitions', () => {
  it('names a table by its literal TableName, else by its logical id', () => {
    expect(
      localTableName('EventsTable1A2B', { Type: 'AWS::DynamoDB::Table', Properties: { TableName: 'events' } }),
    ).toBe('events');
    expect(
      localTableName('EventsTable1A2B', {
        Type: 'AWS::DynamoDB::Table',
        Properties: { TableName: { 'Fn::Join': ['-', ['a', 'b']] } },
      }),
    ).toBe('EventsTable1A2B');
    expect(localTableName('EventsTable1A2B', { Type: 'AWS::DynamoDB::Table' })).toBe('EventsTable1A2B');
  });

  it('rejects an invalid table definition naming the resource and property, before calling DynamoDB', async () => {
    // Nothing listens here: a request would fail with a connection error, not a DefinitionError.
    const client = new DynamoDBClient({
      endpoint: 'http://127.0.0.1:9',
      region: 'us-east-1',
      credentials: { accessKeyId: 'x', secretAccessKey: 'x' },
      maxAttempts: 1,
    });
    const template = {
      Resources: {
        BadTable: {
          Type: 'AWS::DynamoDB::Table',
          Properties: {
            KeySchema: [{ AttributeName: 'pk', KeyType: 'PRIMARY' }],
            AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
          },
        },
      },
    };
    const attempt = createTablesFromTemplate(client, template);
    await expect(attempt).rejects.toThrow(DefinitionError);
    await expect(attempt).rejects.toThrow(/Resources\.BadTable\.Properties\.KeySchema\.0\.KeyType/);
    client.destroy();
  });
});
