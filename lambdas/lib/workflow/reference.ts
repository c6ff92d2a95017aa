/**
 * The field reference of the definition format, generated from the zod schemas (their
 * `.describe()` texts), so the documentation cannot drift from what the loader accepts.
 */
import * as z from 'zod';
import { ManifestSchema, StepFrontmatterSchema } from './schema.ts';

type Json = Record<string, any>;

interface Row {
  field: string;
  type: string;
  default?: string;
  description: string;
}

const code = (text: string) => `\`${text}\``;

function typeOf(s: Json): string {
  if (s.const !== undefined) return code(String(s.const));
  if (s.enum) return s.enum.map((v: unknown) => code(String(v))).join(' \\| ');
  if (s.anyOf || s.oneOf) return [...new Set((s.anyOf ?? s.oneOf).map(typeOf))].join(' \\| ');
  if (s.type === 'array') {
    const item = typeOf(s.items ?? {});
    return item.includes('|') ? `(${item})[]` : `${item}[]`;
  }
  if (s.type === 'integer' || s.type === 'number') {
    const max = s.maximum !== undefined && s.maximum < Number.MAX_SAFE_INTEGER ? s.maximum : undefined;
    const range = s.minimum !== undefined || max !== undefined ? ` ${s.minimum ?? ''}..${max ?? ''}` : '';
    return `${s.type}${range}`;
  }
  if (s.type === 'object' && s.additionalProperties && typeof s.additionalProperties === 'object' && !s.properties) return `map of ${typeOf(s.additionalProperties)}`;
  return s.type ?? 'any';
}

function rows(schema: Json, prefix = ''): Row[] {
  const out: Row[] = [];
  const required = new Set<string>(schema.required ?? []);
  for (const [key, raw] of Object.entries<Json>(schema.properties ?? {})) {
    const field = `${prefix}${key}`;
    const items = raw.type === 'array' ? raw.items : undefined;
    const variants: Json[] = (items?.oneOf ?? items?.anyOf ?? []).filter((v: Json) => v.properties);
    out.push({
      field: code(field) + (required.has(key) || raw.default !== undefined ? '' : ' (optional)'),
      type: variants.length ? `${variants.map((v) => typeOf(v.properties?.type ?? {})).join(' \\| ')} objects[]` : typeOf(raw),
      ...(raw.default !== undefined && { default: code(JSON.stringify(raw.default)) }),
      description: raw.description ?? '',
    });
    if (raw.type === 'object' && raw.properties) out.push(...rows(raw, `${field}.`));
    if (raw.type === 'object' && raw.additionalProperties?.properties) out.push(...rows(raw.additionalProperties, `${field}.<name>.`));
    // A list of tagged objects (triggers): their fields, once each.
    const seen = new Set<string>();
    for (const variant of variants)
      for (const row of rows(variant, `${field}[].`))
        if (!row.field.startsWith(code(`${field}[].type`)) && !seen.has(row.field)) {
          seen.add(row.field);
          out.push(row);
        }
  }
  return out;
}

function table(schema: z.ZodType): string {
  const json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Json;
  const lines = ['| Field | Type | Default | Description |', '| --- | --- | --- | --- |'];
  for (const r of rows(json)) lines.push(`| ${r.field} | ${r.type} | ${r.default ?? ''} | ${r.description.replaceAll('|', '\\|')} |`);
  return `${lines.join('\n')}\n`;
}

/** The markdown reference of `workflow.yaml` and the step frontmatter (what the README shows between its reference markers). */
export function definitionReference(): string {
  return ['#### `workflow.yaml`', '', table(ManifestSchema), '#### Step frontmatter (`steps/<step>.md`)', '', table(StepFrontmatterSchema)].join('\n');
}
