/**
 * `npm run docs:generate` (every generated part of docs/) and `npm run schemas` (the JSON Schemas
 * only): rewrites them from their sources. test/docs/generated.test.ts fails while they differ.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, relative } from 'node:path';
import { GENERATED_PARTS, schemaFiles, withPart } from '../../docs/generate/generated.ts';

const only = process.argv[2];
for (const { file, text } of schemaFiles()) {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, text);
  console.log(`wrote ${relative(process.cwd(), file)}`);
}
if (only !== 'schemas')
  for (const part of GENERATED_PARTS) {
    writeFileSync(part.file, withPart(readFileSync(part.file, 'utf8'), part.id, await part.text()));
    console.log(`wrote ${relative(process.cwd(), part.file)} (${part.id})`);
  }
