/**
 * Everything in docs/ that is generated from a source of truth, kept equal to it by
 * test/docs/generated.test.ts and rewritten by `npm run docs:generate` (`npm run schemas` for the
 * JSON Schemas alone):
 * - docs/schemas/<kind>.schema.json, from the zod schemas;
 * - the field tables of docs/reference/<kind>.md, from the same schemas;
 * - docs/reference/cli.md, from the commander program;
 * - the graph of each docs/examples/<example>.md, as `stepwise graph` draws it;
 * - the layer diagram and the figures of docs/internals/architecture.md, from the imports of src/.
 * A generated part of a page sits between `<!-- generated:ID -->` and `<!-- end generated:ID -->`.
 */
import { join } from 'node:path';
import { createProgram } from '../../src/cli/program.ts';
import { PROJECT_ROOT } from '../../src/core/paths.ts';
import { DEFINITION_KINDS, definitionJsonSchema, SCHEMAS_DIR, schemaFileName } from '../../src/definitions/kinds.ts';
import { listLifecycles, loadLifecycle } from '../../src/definitions/lifecycle/loader.ts';
import { lifecycleToMermaid } from '../../src/definitions/lifecycle/mermaid.ts';
import { referenceTable } from '../../src/definitions/reference.ts';
import { listWorkflows, loadWorkflow } from '../../src/definitions/workflow/loader.ts';
import { workflowToMermaid } from '../../src/definitions/workflow/mermaid.ts';
import { importGraph, layerFigures, layersMermaid, roomsMermaid, SRC_DIR } from './architecture.ts';
import { cliReference } from './cli-reference.ts';

export const DOCS_DIR = join(PROJECT_ROOT, 'docs');

/** A generated part of a markdown page. */
export interface GeneratedPart {
  readonly file: string;
  readonly id: string;
  readonly text: () => Promise<string> | string;
}

const mermaid = (text: string) => `\`\`\`mermaid\n${text}\`\`\`\n`;

export const GENERATED_PARTS: readonly GeneratedPart[] = [
  ...DEFINITION_KINDS.map((kind) => ({
    file: join(DOCS_DIR, 'reference', `${kind.name}.md`),
    id: 'fields',
    text: () => referenceTable(kind),
  })),
  { file: join(DOCS_DIR, 'reference', 'cli.md'), id: 'cli', text: async () => cliReference(await createProgram()) },
  ...listWorkflows().map((name) => ({
    file: join(DOCS_DIR, 'examples', `${name}.md`),
    id: 'graph',
    text: () => mermaid(workflowToMermaid(loadWorkflow(name))),
  })),
  ...listLifecycles().map((name) => ({
    file: join(DOCS_DIR, 'examples', `${name}.md`),
    id: 'graph',
    text: () => mermaid(lifecycleToMermaid(loadLifecycle(name))),
  })),
  {
    file: join(DOCS_DIR, 'internals', 'architecture.md'),
    id: 'layers',
    text: () => mermaid(layersMermaid(importGraph(SRC_DIR))),
  },
  {
    file: join(DOCS_DIR, 'internals', 'architecture.md'),
    id: 'rooms',
    text: () => mermaid(roomsMermaid(importGraph(SRC_DIR), 'local')),
  },
  {
    file: join(DOCS_DIR, 'internals', 'architecture.md'),
    id: 'figures',
    text: () => layerFigures(importGraph(SRC_DIR)),
  },
];

/** The JSON Schema files: path and content. */
export const schemaFiles = (): { file: string; text: string }[] =>
  DEFINITION_KINDS.map((kind) => ({
    file: join(SCHEMAS_DIR, schemaFileName(kind.name)),
    text: `${JSON.stringify(definitionJsonSchema(kind), null, 2)}\n`,
  }));

const markers = (id: string) => [`<!-- generated:${id} -->\n`, `<!-- end generated:${id} -->`] as const;

/** The generated part of `page`, or undefined when the page has no such markers. */
export function currentPart(page: string, id: string): string | undefined {
  const [start, end] = markers(id);
  const from = page.indexOf(start);
  const to = page.indexOf(end);
  return from < 0 || to < from ? undefined : page.slice(from + start.length, to);
}

/** `page` with the part between the markers replaced by `text`. */
export function withPart(page: string, id: string, text: string): string {
  const [start, end] = markers(id);
  const from = page.indexOf(start);
  const to = page.indexOf(end);
  if (from < 0 || to < from) throw new Error(`no ${start.trim()} ... ${end} markers`);
  return page.slice(0, from + start.length) + `\n${text}\n` + page.slice(to);
}
