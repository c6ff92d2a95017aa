/** `check_warranty`: the registry port's adapters and the status rule. */
import { readFileSync } from 'node:fs';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { z } from 'zod';
import type { RegistryEntry, WarrantyRegistry } from './ports.ts';

/**
 * The serial-number format of the warranty agent: `SN` followed by 5 to 8 digits (`SN12345`),
 * case-insensitive. Samples, the registry and the offline model's extractor all use it; the
 * tools themselves accept any string and answer `not_found` for unknown ones.
 */
export const SERIAL_NUMBER = /\bSN\d{5,8}\b/i;

export type WarrantyStatus = 'valid' | 'expired' | 'not_found';

export const RegistryEntrySchema = z
  .object({
    serial: z.string().min(1),
    product: z.string().min(1),
    warrantyEnd: z.iso.date(),
  })
  .strict();

export const normalizeSerial = (serial: string) => serial.trim().toUpperCase();

/** Valid through the whole `warrantyEnd` day (UTC), expired after it. */
export function warrantyStatus(entry: RegistryEntry | undefined, now: Date): WarrantyStatus {
  if (!entry) return 'not_found';
  return now.toISOString().slice(0, 10) <= entry.warrantyEnd ? 'valid' : 'expired';
}

/** Local adapter: a JSON array of `{ serial, product, warrantyEnd }`, read once on first use. */
export function jsonFileRegistry(file: string): WarrantyRegistry {
  let bySerial: Map<string, RegistryEntry> | undefined;
  return {
    async lookup(serial) {
      bySerial ??= new Map(
        z
          .array(RegistryEntrySchema)
          .parse(JSON.parse(readFileSync(file, 'utf8')))
          .map((e) => [normalizeSerial(e.serial), e]),
      );
      return bySerial.get(normalizeSerial(serial));
    },
  };
}

const registryKey = (serial: string) => ({ pk: `SERIAL#${normalizeSerial(serial)}`, sk: 'WARRANTY' });

/** The WarrantyTable item of a registry entry (`pk = SERIAL#<serial>`, `sk = WARRANTY`): what a registry import writes. */
export function registryItem(entry: RegistryEntry): Record<string, string> {
  return { ...registryKey(entry.serial), serial: normalizeSerial(entry.serial), product: entry.product, warrantyEnd: entry.warrantyEnd };
}

/** AWS adapter: WarrantyTable, items as written by `registryItem`. */
export function dynamoRegistry(client: DynamoDBClient, tableName: string): WarrantyRegistry {
  const doc = DynamoDBDocumentClient.from(client);
  return {
    async lookup(serial) {
      const { Item } = await doc.send(new GetCommand({ TableName: tableName, Key: registryKey(serial) }));
      if (!Item) return undefined;
      const { serial: s, product, warrantyEnd } = Item;
      return RegistryEntrySchema.parse({ serial: s, product, warrantyEnd });
    },
  };
}
