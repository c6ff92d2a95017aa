/**
 * The field reference of every definition file, generated from the same JSON Schemas editors use
 * (themselves generated from the zod schemas and their `.describe()` texts), so the documentation
 * cannot drift from what the loaders accept.
 */
import { DEFINITION_KINDS, type DefinitionKind, definitionJsonSchema } from './kinds.ts';

type Json = Record<string, any>;

interface Row {
  field: string;
  type: string;
  default?: string;
  description: string;
}

const code = (text: string) => `\`${text}\``;

/** Follows `$ref`s into the schema's definitions, expanding each named definition once (where it first appears). */
class Walker {
  /** Named definition -> the field it was expanded under. */
  private readonly expanded = new Map<string, string>();

  constructor(private readonly root: Json) {}

  deref(s: Json): Json {
    if (typeof s.$ref !== 'string') return s;
    const name = s.$ref.replace('#/definitions/', '');
    return { ...this.root.definitions?.[name], ...s, $ref: undefined, def: name };
  }

  /** Object members of a union (`anyOf`) or a list's items, dereferenced. */
  objects(s: Json): Json[] {
    return ((s.anyOf ?? s.oneOf ?? [s]) as Json[]).map((v) => this.deref(v)).filter((v) => v.properties);
  }

  typeOf(raw: Json): string {
    const s = this.deref(raw);
    if (s.def && s.properties)
      return this.expanded.has(s.def) ? `${s.def} object (as \`${this.expanded.get(s.def)}\`)` : `${s.def} object`;
    if (s.const !== undefined) return code(String(s.const));
    if (s.enum) return s.enum.map((v: unknown) => code(String(v))).join(' \\| ');
    if (s.anyOf || s.oneOf)
      return [...new Set<string>((s.anyOf ?? s.oneOf).map((v: Json) => this.typeOf(v)))].join(' \\| ');
    if (s.type === 'array') {
      const item = this.typeOf(s.items ?? {});
      return item.includes('|') ? `(${item})[]` : `${item}[]`;
    }
    if (s.type === 'integer' || s.type === 'number') {
      const max = s.maximum !== undefined && s.maximum < Number.MAX_SAFE_INTEGER ? s.maximum : undefined;
      const min = s.minimum ?? s.exclusiveMinimum;
      const range = min !== undefined || max !== undefined ? ` ${min ?? ''}..${max ?? ''}` : '';
      return `${s.type}${range}`;
    }
    if (s.type === 'object' && s.additionalProperties && typeof s.additionalProperties === 'object' && !s.properties)
      return `map of ${this.typeOf(s.additionalProperties)}`;
    if (s.type === 'object' && s.properties) return 'object';
    if (Array.isArray(s.type)) return s.type.join(' \\| ');
    return s.type ?? 'any';
  }

  rows(raw: Json, prefix: string): Row[] {
    const schema = this.deref(raw);
    const out: Row[] = [];
    const required = new Set<string>(schema.required ?? []);
    for (const [key, value] of Object.entries<Json>(schema.properties ?? {})) {
      const field = `${prefix}${key}`;
      const s = this.deref(value);
      const items = s.type === 'array' ? s.items : undefined;
      const tagged = items ? this.objects(items).filter((v) => v.properties?.type?.const !== undefined) : [];
      out.push({
        field: code(field) + (required.has(key) || s.default !== undefined ? '' : ' (optional)'),
        type:
          tagged.length > 1
            ? `${tagged.map((v) => this.typeOf(v.properties.type)).join(' \\| ')} objects[]`
            : this.typeOf(value),
        ...(s.default !== undefined && { default: code(JSON.stringify(s.default)) }),
        description: value.description ?? s.description ?? '',
      });
      out.push(...this.nested(s, field));
    }
    return out;
  }

  /** The fields inside a field: an object's, a map's values' (`.<name>.`), a list's items' (`[].`), each union member's once. */
  private nested(s: Json, field: string): Row[] {
    if (s.properties) return this.expand(s, `${field}.`);
    let inner = s;
    let path = field;
    // Through lists and maps to their items: `steps.<name>[].when`.
    for (;;) {
      if (inner.type === 'array' && inner.items) [inner, path] = [this.deref(inner.items), `${path}[]`];
      else if (inner.type === 'object' && !inner.properties && typeof inner.additionalProperties === 'object')
        [inner, path] = [this.deref(inner.additionalProperties), `${path}.<name>`];
      else break;
    }
    path = `${path}.`;
    const variants = this.objects(inner);
    const out: Row[] = [];
    const shown = new Set<string>();
    for (const variant of variants) {
      // A union's `type` tag is named in the list's type; a plain `type` field (an output's) is a field.
      const tag = this.deref(variant.properties?.type ?? {}).const !== undefined;
      for (const row of this.expand(variant, path))
        if (!(tag && row.field.startsWith(code(`${path}type`))) && !shown.has(row.field)) {
          shown.add(row.field);
          out.push(row);
        }
    }
    return out;
  }

  /** A named definition's fields are listed once: later uses (and recursion: a state's `states`) point back. */
  private expand(s: Json, path: string): Row[] {
    if (!s.def) return this.rows(s, path);
    if (this.expanded.has(s.def)) return [];
    this.expanded.set(s.def, path.replace(/\.$/, ''));
    return this.rows(s, path);
  }
}

/** The markdown table of one kind of definition file: one row per field, nested fields dotted. */
export function referenceTable(kind: DefinitionKind): string {
  const json = definitionJsonSchema(kind);
  const lines = ['| Field | Type | Default | Description |', '| --- | --- | --- | --- |'];
  for (const r of new Walker(json).rows(json, ''))
    lines.push(`| ${r.field} | ${r.type} | ${r.default ?? ''} | ${r.description.replaceAll('|', '\\|')} |`);
  return `${lines.join('\n')}\n`;
}

/** Every kind's table under a heading naming the file (`stepwise reference`). */
export function definitionReference(kinds: readonly DefinitionKind[] = DEFINITION_KINDS): string {
  return kinds.map((k) => [`## ${k.path}`, '', referenceTable(k)].join('\n')).join('\n');
}
