/** `check_warranty`: the registry port's adapters and the status rule. */
import { readFileSync } from 'node:fs';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { BatchWriteCommand, DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { InvalidInputError } from 'stepwise';
import * as z from 'zod';

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

/** One row of the warranty registry (`registry.json` is an array of these). */
export type RegistryEntry = z.infer<typeof RegistryEntrySchema>;

export interface WarrantyRegistry {
  /** The entry for a normalised (trimmed, upper-case) serial number, if registered. */
  lookup(serial: string): Promise<RegistryEntry | undefined>;
}

export const normalizeSerial = (serial: string) => serial.trim().toUpperCase();

/** Valid through the whole `warrantyEnd` day (UTC), expired after it. */
export function warrantyStatus(entry: RegistryEntry | undefined, now: Date): WarrantyStatus {
  if (!entry) return 'not_found';
  return now.toISOString().slice(0, 10) <= entry.warrantyEnd ? 'valid' : 'expired';
}

/** Read a registry file: a JSON array of `{ serial, product, warrantyEnd: "YYYY-MM-DD" }`. */
export function readRegistryFile(file: string): RegistryEntry[] {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new InvalidInputError(`${file}: ${(e as Error).message}`);
  }
  const parsed = z.array(RegistryEntrySchema).safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new InvalidInputError(`${file}: ${issue.path.join('.') || '(root)'}: ${issue.message}`);
  }
  return parsed.data;
}

/** Local adapter: a registry file, read once on first use. */
export function jsonFileRegistry(file: string): WarrantyRegistry {
  let bySerial: Map<string, RegistryEntry> | undefined;
  return {
    async lookup(serial) {
      bySerial ??= new Map(readRegistryFile(file).map((e) => [normalizeSerial(e.serial), e]));
      return bySerial.get(normalizeSerial(serial));
    },
  };
}

const registryKey = (serial: string) => ({ pk: `SERIAL#${normalizeSerial(serial)}`, sk: 'WARRANTY' });

/** The WarrantyTable item of a registry entry (`pk = SERIAL#<serial>`, `sk = WARRANTY`): what a registry import writes. */
export function registryItem(entry: RegistryEntry): Record<string, string> {
  return {
    ...registryKey(entry.serial),
    serial: normalizeSerial(entry.serial),
    product: entry.product,
    warrantyEnd: entry.warrantyEnd,
  };
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

/**
 * Load registry entries into the WarrantyTable (25 items per BatchWriteItem, the API's limit;
 * unprocessed items are written again until none are left). Returns how many were written.
 */
export async function importRegistry(
  client: DynamoDBClient,
  tableName: string,
  entries: RegistryEntry[],
): Promise<number> {
  const doc = DynamoDBDocumentClient.from(client);
  for (let i = 0; i < entries.length; i += 25) {
    let requests: { PutRequest: { Item: Record<string, string> } }[] | undefined = entries
      .slice(i, i + 25)
      .map((e) => ({ PutRequest: { Item: registryItem(e) } }));
    for (let attempt = 0; requests?.length; attempt++) {
      if (attempt > 0) await new Promise((r) => setTimeout(r, Math.min(2000, 50 * 2 ** attempt)));
      const { UnprocessedItems } = await doc.send(new BatchWriteCommand({ RequestItems: { [tableName]: requests } }));
      requests = UnprocessedItems?.[tableName] as typeof requests;
    }
  }
  return entries.length;
}
