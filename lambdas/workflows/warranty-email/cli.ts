import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { Command } from 'commander';
import { InvalidInputError } from 'stepwise';
import { action, awsOptions, printJson, withExamples } from 'stepwise/cli';
import { importRegistry, readRegistryFile } from './registry.ts';

/** The client's region, or one line saying how to give it (the SDK's own error is a bare "Region is missing"). */
async function requireRegion(client: DynamoDBClient): Promise<void> {
  try {
    await client.config.region();
  } catch {
    throw new InvalidInputError(
      'no AWS region for the WarrantyTable: give --region REGION, set AWS_REGION, or use a --profile that names one',
    );
  }
}

export function register(program: Command): void {
  const registry = program.command('registry').description('The warranty registry that check_warranty reads.');
  const command = registry
    .command('import')
    .description(
      'Load a registry file (a JSON array of { serial, product, warrantyEnd: "YYYY-MM-DD" }) into a deployed WarrantyTable. ' +
        'Uses the default AWS credentials; the table name is in the stack (Stepwise-WarrantyEmail-<env>).',
    )
    .argument('<file>', 'the registry JSON file')
    .requiredOption('--table <name>', 'the WarrantyTable name')
    .option('--endpoint <url>', 'a DynamoDB endpoint (e.g. DynamoDB Local)')
    .option('--json', 'print { imported, table } as JSON');
  awsOptions(command, 'of the table');
  withExamples(command, [
    'stepwise registry import statemachines/warranty-email/registry.json --table WARRANTY_TABLE --region us-east-1 --profile dev',
  ]);
  command.action(
    action(async (file: string, opts: { table: string; region?: string; endpoint?: string; json?: boolean }) => {
      const entries = readRegistryFile(file);
      const client = new DynamoDBClient({ region: opts.region, endpoint: opts.endpoint });
      try {
        await requireRegion(client);
        const imported = await importRegistry(client, opts.table, entries);
        if (opts.json) printJson({ imported, table: opts.table });
        else process.stdout.write(`imported ${imported} registry entries into ${opts.table}\n`);
      } finally {
        client.destroy();
      }
    }),
  );
}
