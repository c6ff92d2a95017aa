import { readdirSync, readFileSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import type * as z from 'zod';
import { DefinitionError } from '../core/errors.ts';
import { STEPWISE_VERSION } from '../core/paths.ts';
import { issueText } from './issue-text.ts';

/** A path as users see it in error messages: relative to the working directory. */
export function relPath(file: string): string {
  return relative(process.cwd(), file) || file;
}

/** The first zod issue with its full path; inside a union, the member whose base type matched. */
function firstIssue(issues: readonly z.core.$ZodIssue[]): z.core.$ZodIssue {
  const issue = issues[0]!;
  if (issue.code === 'invalid_union' && issue.errors.length > 0) {
    const branch =
      issue.errors.find((b) => !b.some((i) => i.code === 'invalid_type' && i.path.length === 0)) ?? issue.errors[0]!;
    const inner = firstIssue(branch);
    return { ...inner, path: [...issue.path, ...inner.path] };
  }
  // A record key that fails its pattern: say what the key must be, not only that it is invalid.
  if (issue.code === 'invalid_key' && issue.issues.length > 0) return { ...issue.issues[0]!, path: issue.path };
  return issue;
}

/**
 * Validate a definition file's content; the error names the file and the field. A field the
 * schema does not know (every definition schema is strict) is most likely one a newer Stepwise
 * added, so the message says which kind of file (the schema's `meta` title) and which version.
 */
export function checkDefinition<T>(schema: z.ZodType<T>, value: unknown, file: string): T {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = firstIssue(parsed.error.issues);
  if (issue.code === 'unrecognized_keys') {
    const kind = (schema.meta()?.title as string | undefined) ?? 'this file';
    throw new DefinitionError(
      file,
      [...issue.path, issue.keys[0]!].map(String).join('.'),
      `not a field of ${kind} in stepwise ${STEPWISE_VERSION} (a newer Stepwise?)`,
    );
  }
  const { path, message } = issueText(issue);
  throw new DefinitionError(file, path, message);
}

// A Lambda bundle parses no YAML: it carries its workflow folder's definitions compiled to JSON at
// synth and registered by its generated entry (src/cdk/constructs/lambda-entry.ts). StepwiseFunction
// defines STEPWISE_LAMBDA_BUNDLE for esbuild, which folds the condition and leaves the parser out;
// run from source, the parser is loaded.
const yaml = process.env.STEPWISE_LAMBDA_BUNDLE === undefined ? await import('yaml') : undefined;

/** The YAML parsed last for each file name, with its text: every command reads each definition file once. */
const parsedYaml = new Map<string, { text: string; firstLine: number; value: unknown }>();

/**
 * Parse YAML text; a syntax error or a duplicate map key becomes a DefinitionError on field `(yaml)`
 * that gives the line in the file itself (`firstLine`: where `text` starts in it, e.g. 2 for
 * frontmatter after `---`). The same text under the same name is parsed once per process; its value
 * is frozen, since every caller shares it.
 */
export function parseDefinitionYaml(text: string, file: string, firstLine = 1): unknown {
  if (!yaml)
    throw new DefinitionError(
      file,
      '(yaml)',
      'a Lambda bundle parses no YAML: its definitions are compiled at build time',
    );
  const hit = parsedYaml.get(file);
  if (hit && hit.text === text && hit.firstLine === firstLine) return hit.value;
  const value = deepFreeze(parseUncached(yaml, text, file, firstLine));
  parsedYaml.set(file, { text, firstLine, value });
  return value;
}

function parseUncached(parser: typeof import('yaml'), text: string, file: string, firstLine: number): unknown {
  const at = (line: number, col: number) => `line ${line + firstLine - 1}, column ${col}`;
  // The library's own duplicate-key check compares every key with every other (quadratic: 20,000 keys
  // took 7 s); keys are checked below in one pass instead.
  const lines = new parser.LineCounter();
  const doc = parser.parseDocument(text, { uniqueKeys: false, lineCounter: lines });
  const error = doc.errors[0];
  if (error) {
    const first = error.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '');
    const where = error.linePos ? `${at(error.linePos[0].line, error.linePos[0].col)}: ` : '';
    throw new DefinitionError(file, '(yaml)', `${where}${first}`);
  }
  parser.visit(doc, {
    Map(_, map) {
      const seen = new Map<unknown, number>();
      for (const { key } of map.items) {
        if (!parser.isScalar(key) || !key.range) continue;
        const pos = lines.linePos(key.range[0]);
        const earlier = seen.get(key.value);
        if (earlier !== undefined)
          throw new DefinitionError(
            file,
            '(yaml)',
            `${at(pos.line, pos.col)}: duplicate key "${String(key.value)}" (first at line ${earlier + firstLine - 1})`,
          );
        seen.set(key.value, pos.line);
      }
    },
  });
  return doc.toJS();
}

/** Freeze a parsed value and everything in it (frozen first, so an alias's shared or cyclic object is visited once). */
function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

/** A markdown definition file: its YAML frontmatter (between `---` lines), parsed, and the body after it. */
export interface FrontmatterFile {
  readonly frontmatter: unknown;
  readonly body: string;
}

const FRONTMATTER = /^---\r?\n([\s\S]*?)\r?\n---\r?\n?([\s\S]*)$/;

/** Split and parse a markdown file's frontmatter; `file` names it in errors. */
export function parseFrontmatter(text: string, file: string): FrontmatterFile {
  const m = FRONTMATTER.exec(text);
  if (!m) throw new DefinitionError(file, '(frontmatter)', 'missing YAML frontmatter between --- lines');
  return { frontmatter: parseDefinitionYaml(m[1]!, file, 2), body: m[2]! };
}

/*
 * Definition files compiled at build time: a bundle's table holds its workflow folder's YAML and
 * frontmatter already parsed (nothing without a folder), keyed by the path from the folder on.
 */

/** `<workflow folder>/<path in it>`: the same wherever the folder sits (`/var/task/statemachines` on Lambda). */
const compiledKey = (folder: string, pathInFolder: string) => [folder, ...pathInFolder.split(/[\\/]/)].join('/');

/** The bundled folder and its compiled definitions, registered by the bundle's generated entry. */
let bundled: { folder: string; table: Readonly<Record<string, unknown>> } | undefined;

/** Called by a bundle's generated entry, before the handler runs: the definitions of its folder. */
export function registerCompiledDefinitions(folder: string, table: Readonly<Record<string, unknown>>): void {
  bundled = { folder, table };
}

/** The compiled file at `file`, in a bundle built with a workflow folder. */
function compiled(file: string): unknown {
  const parts = file.split(/[\\/]/);
  const at = bundled ? parts.lastIndexOf(bundled.folder) : -1;
  const key = at < 0 ? '' : compiledKey(parts[at]!, parts.slice(at + 1).join('/'));
  if (!bundled || !Object.hasOwn(bundled.table, key))
    throw new DefinitionError(relPath(file), '(file)', 'not in the definitions compiled into this bundle');
  return bundled.table[key];
}

/** Read and parse a YAML definition file. */
export function readDefinitionYaml(file: string): unknown {
  if (process.env.STEPWISE_LAMBDA_BUNDLE !== undefined) return compiled(file);
  return parseDefinitionYaml(readFileSync(file, 'utf8'), relPath(file));
}

/** Read a markdown definition file with YAML frontmatter. */
export function readFrontmatterFile(file: string): FrontmatterFile {
  if (process.env.STEPWISE_LAMBDA_BUNDLE !== undefined) return compiled(file) as FrontmatterFile;
  return parseFrontmatter(readFileSync(file, 'utf8'), relPath(file));
}

/** Folders of a workflow only the CLI and tests read (`stepwise eval`, `stepwise run`, recorded model answers): no Lambda parses or ships them. */
export const CLI_ONLY_FOLDERS: ReadonlySet<string> = new Set(['evals', 'samples', 'conversations', 'recordings']);

/**
 * Build time (run from source, so the readers above parse): every `.yaml` file and `.md` file with
 * frontmatter of the workflow folder `dir` (but evals and samples), under its {@link compiledKey}.
 */
export function compileDefinitions(dir: string): Record<string, unknown> {
  const table: Record<string, unknown> = {};
  for (const entry of readdirSync(dir, { recursive: true, encoding: 'utf8' }).sort()) {
    if (CLI_ONLY_FOLDERS.has(entry.split(/[\\/]/)[0]!)) continue;
    const file = join(dir, entry);
    const key = compiledKey(basename(dir), entry);
    if (entry.endsWith('.yaml')) table[key] = readDefinitionYaml(file);
    else if (entry.endsWith('.md')) {
      const text = readFileSync(file, 'utf8');
      // A markdown file without frontmatter (a README) is documentation, not a definition.
      if (FRONTMATTER.test(text)) table[key] = parseFrontmatter(text, relPath(file));
    }
  }
  return table;
}
