/**
 * The generated parts of the docs equal what their sources generate now: the JSON Schemas and the
 * reference tables (the zod schemas), the CLI reference (the commander program), the example graphs
 * (`stepwise graph`), the layers of the architecture page (the imports of src/). `npm run docs:generate`
 * rewrites them.
 */
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { currentPart, GENERATED_PARTS, schemaFiles } from '../../docs/generate/generated.ts';
import { DEFINITION_KINDS, definitionJsonSchema } from '../../src/definitions/kinds.ts';
import { referenceTable } from '../../src/definitions/reference.ts';

const HINT = '(run npm run docs:generate)';

describe('generated docs', () => {
  it.each(schemaFiles().map((s) => [s.file.replace(/.*\/docs\//, 'docs/'), s] as const))(
    '%s is what the zod schema generates',
    (_name, { file, text }) => {
      expect(existsSync(file), `${file} is missing ${HINT}`).toBe(true);
      expect(readFileSync(file, 'utf8'), HINT).toBe(text);
    },
  );

  it.each(GENERATED_PARTS.map((p) => [`${p.file.replace(/.*\/docs\//, 'docs/')} (${p.id})`, p] as const))(
    '%s is what its source generates',
    async (_name, part) => {
      expect(currentPart(readFileSync(part.file, 'utf8'), part.id), HINT).toBe(`\n${await part.text()}\n`);
    },
  );

  it('documents every field of every definition file with a description', () => {
    for (const kind of DEFINITION_KINDS) {
      const rows = referenceTable(kind)
        .split('\n')
        .filter((l) => l.startsWith('| `'));
      expect(rows.length, kind.name).toBeGreaterThan(3);
      for (const row of rows) expect(row.split(/(?<!\\)\|/)[4]!.trim(), `${kind.name}: ${row}`).not.toBe('');
    }
  });
});

/** Every object schema of a JSON Schema, with where it is. */
function objects(schema: unknown, at = '#'): [string, Record<string, unknown>][] {
  if (schema === null || typeof schema !== 'object') return [];
  const node = schema as Record<string, unknown>;
  const own: [string, Record<string, unknown>][] = node.properties ? [[at, node]] : [];
  return [
    ...own,
    ...Object.entries(node).flatMap(([k, v]) =>
      Array.isArray(v) ? v.flatMap((x, i) => objects(x, `${at}/${k}/${i}`)) : objects(v, `${at}/${k}`),
    ),
  ];
}

describe('definition schemas', () => {
  it.each(DEFINITION_KINDS.map((k) => [k.name, k] as const))(
    '%s: every object refuses fields it does not declare',
    (_name, kind) => {
      const found = objects(definitionJsonSchema(kind));
      expect(found.length).toBeGreaterThan(0);
      for (const [at, node] of found) expect(node.additionalProperties, `${kind.name} ${at}`).toBe(false);
    },
  );
});
