import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { Command } from 'commander';
import { importRegistry, readRegistryFile } from './registry.ts';
import { action, printJson } from 'stepwise/cli';

export function register(program: Command): void {
  const registry = program.command('registry').description('The warranty registry that check_warranty reads.');
  registry
    .command('import')
    .description(
      'Load a registry file (a JSON array of { serial, product, warrantyEnd: "YYYY-MM-DD" }) into a deployed WarrantyTable. ' +
        'Uses the default AWS credentials; the table name is in the stack (Stepwise-WarrantyEmail-<env>).',
    )
    .argument('<file>', 'the registry JSON file')
    .requiredOption('--table <name>', 'the WarrantyTable name')
    .option('--region <region>', 'AWS region (default: from the environment)')
    .option('--endpoint <url>', 'a DynamoDB endpoint (e.g. DynamoDB Local)')
    .option('--json', 'print { imported, table } as JSON')
    .action(
      action(async (file: string, opts: { table: string; region?: string; endpoint?: string; json?: boolean }) => {
        const entries = readRegistryFile(file);
        const client = new DynamoDBClient({ region: opts.region, endpoint: opts.endpoint });
        const imported = await importRegistry(client, opts.table, entries);
        if (opts.json) printJson({ imported, table: opts.table });
        else process.stdout.write(`imported ${imported} registry entries into ${opts.table}\n`);
      }),
    );
}
