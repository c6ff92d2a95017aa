import { defineTool, requireEnv } from 'stepwise';
import * as z from 'zod';
import { dynamoRegistry, jsonFileRegistry, normalizeSerial, warrantyStatus } from '../registry.ts';

/**
 * Look a serial up in the warranty registry: the WarrantyTable on AWS, or the registry file named
 * by `WARRANTY_REGISTRY_FILE` locally (the manifest's `local.env`).
 */
export default defineTool({
  name: 'check_warranty',
  description:
    'Look a serial number up in the warranty registry. Returns status valid, expired or not_found, with product and warrantyEnd when registered.',
  input: z.strictObject({
    serialNumber: z.string().trim().min(1).max(64).describe('The device serial number, e.g. SN12345.'),
  }),
  // The serial identifies the customer's device.
  personal: ['serialNumber'],
  resources: { tables: { warranty: 'read' } },
  connect: (env, aws) =>
    env.WARRANTY_REGISTRY_FILE
      ? jsonFileRegistry(env.WARRANTY_REGISTRY_FILE)
      : dynamoRegistry(aws.dynamo(), requireEnv(env, 'WARRANTY_TABLE', 'check_warranty')),
  async run({ serialNumber }, ctx, registry) {
    const serial = normalizeSerial(serialNumber);
    const entry = await registry.lookup(serial);
    const status = warrantyStatus(entry, ctx.now());
    return entry
      ? { serialNumber: serial, status, product: entry.product, warrantyEnd: entry.warrantyEnd }
      : { serialNumber: serial, status };
  },
});
