/** `stepwise registry import`: the sample registry loaded into a WarrantyTable answers check_warranty's lookups. */

import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  dynamoRegistry,
  importRegistry,
  readRegistryFile,
} from '../../../lambdas/workflows/warranty-email/registry.ts';
import { PROJECT_ROOT } from '../../../src/core/paths.ts';
import { sessionDynamoDb } from '../../../src/local/cloud/dynamodb-connection.ts';
import type { DynamoDbLocal } from '../../../src/local/cloud/dynamodb-local.ts';
import { createTable } from '../../runtime/tools/fixtures.ts';
import { useBuiltProject } from '../../support/tmp.ts';

const REGISTRY = join(PROJECT_ROOT, 'statemachines/warranty-email/registry.json');
let ddb: DynamoDbLocal;
/** This file's tables on the suite's shared emulator. */
const table = (name: string) => `${ddb.tablePrefix}${name}`;
const tmp = mkdtempSync(join(tmpdir(), 'stepwise-registry-'));
// The CLI as installed (compiled), in a copy of the project: it starts without tsx.
const project = useBuiltProject('stepwise-registry-cli-');

beforeAll(async () => {
  ddb = await sessionDynamoDb();
  await Promise.all([createTable(ddb.client, table('Warranty')), createTable(ddb.client, table('Big'))]);
});
afterAll(async () => {
  await ddb?.stop();
  rmSync(tmp, { recursive: true, force: true });
});

describe('registry import', () => {
  it('writes every entry so the DynamoDB registry answers like the file', async () => {
    const entries = readRegistryFile(REGISTRY);
    expect(await importRegistry(ddb.client, table('Warranty'), entries)).toBe(entries.length);
    const registry = dynamoRegistry(ddb.client, table('Warranty'));
    for (const entry of entries) expect(await registry.lookup(entry.serial.toLowerCase())).toEqual(entry);
    expect(await registry.lookup('SN00000')).toBeUndefined();
  });

  it('writes more than one BatchWriteItem (25 items) worth', async () => {
    const entries = Array.from({ length: 60 }, (_, i) => ({
      serial: `SN${10000 + i}`,
      product: 'Kettle',
      warrantyEnd: '2030-01-01',
    }));
    await importRegistry(ddb.client, table('Big'), entries);
    const registry = dynamoRegistry(ddb.client, table('Big'));
    expect(await registry.lookup('SN10059')).toEqual(entries[59]);
    expect(await registry.lookup('SN10000')).toEqual(entries[0]);
  });

  it('the CLI imports a file, and refuses a malformed one with one line', async () => {
    const run = (...args: string[]) =>
      promisify(execFile)('node', [join(project(), 'bin/stepwise.mjs'), 'registry', 'import', ...args], {
        cwd: project(),
        env: { ...process.env, AWS_ACCESS_KEY_ID: 'local', AWS_SECRET_ACCESS_KEY: 'local', AWS_REGION: 'us-east-1' },
      });
    const { stdout } = await run(REGISTRY, '--table', table('Warranty'), '--endpoint', ddb.endpoint, '--json');
    expect(JSON.parse(stdout)).toEqual({ imported: readRegistryFile(REGISTRY).length, table: table('Warranty') });

    const bad = join(tmp, 'bad.json');
    writeFileSync(bad, JSON.stringify([{ serial: 'SN12345', product: 'Kettle', warrantyEnd: 'next year' }]));
    const failure = await run(bad, '--table', table('Warranty'), '--endpoint', ddb.endpoint).catch((e) => e);
    expect(failure.code).toBe(1);
    expect(failure.stderr).toMatch(/^stepwise: .*bad\.json.*0\.warrantyEnd.*\n$/);
  });

  it('takes the credentials of --profile and the region of --region, and says in one line when no region is given', async () => {
    const credentials = join(tmp, 'credentials');
    writeFileSync(credentials, '[stepwise-test]\naws_access_key_id = local\naws_secret_access_key = local\n');
    // No credentials or region in the environment: only the options can supply them.
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('AWS_')));
    const run = (...args: string[]) =>
      promisify(execFile)(
        'node',
        [
          join(project(), 'bin/stepwise.mjs'),
          'registry',
          'import',
          REGISTRY,
          '--table',
          table('Warranty'),
          '--endpoint',
          ddb.endpoint,
          ...args,
        ],
        {
          cwd: project(),
          env: { ...env, AWS_SHARED_CREDENTIALS_FILE: credentials, AWS_CONFIG_FILE: join(tmp, 'no-config') },
        },
      );
    const { stdout } = await run('--profile', 'stepwise-test', '--region', 'eu-west-1', '--json');
    expect(JSON.parse(stdout)).toEqual({ imported: readRegistryFile(REGISTRY).length, table: table('Warranty') });

    const failure = await run('--profile', 'stepwise-test').catch((e) => e);
    expect(failure.code).toBe(1);
    expect(failure.stderr).toBe(
      'stepwise: no AWS region for the WarrantyTable: give --region REGION, set AWS_REGION, or use a --profile that names one\n',
    );
  });
});
