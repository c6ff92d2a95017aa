/**
 * Editors find the JSON Schema of every example definition file and of every file `stepwise init`
 * writes: a `# yaml-language-server: $schema=<relative path>` first line (agent configs: a
 * `$schema` key) naming the schema of the file's kind, which exists.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectFiles, workflowFiles } from '../../src/cli/project-template.ts';
import { PROJECT_ROOT, STATEMACHINES_DIR } from '../../src/core/paths.ts';
import { SCHEMAS_DIR, schemaFileName } from '../../src/definitions/kinds.ts';

/** The kind of a definition file by its place in a workflow or lifecycle folder, or undefined. */
function kindOf(path: string): string | undefined {
  const inFolder = path.split('/').slice(2).join('/');
  if (inFolder === 'workflow.yaml') return 'workflow';
  if (inFolder === 'offline-model.yaml') return 'offline-model';
  if (inFolder === 'statechart.yaml') return 'statechart';
  if (/^evals\/[^/]+\.ya?ml$/.test(inFolder)) return 'eval-case';
  if (/^guards\/[^/]+\.ya?ml$/.test(inFolder)) return 'guard-rules';
  if (/^agents\/[^/]+\.json$/.test(inFolder)) return 'agent-config';
  return undefined;
}

const named = (file: string, text: string) =>
  file.endsWith('.json')
    ? (JSON.parse(text) as { $schema?: string }).$schema
    : /^# yaml-language-server: \$schema=(\S+)\n/.exec(text)?.[1];

const examples = readdirSync(STATEMACHINES_DIR, { recursive: true, encoding: 'utf8' })
  .map((f) => `statemachines/${f}`)
  .filter((f) => kindOf(f) !== undefined);

describe('schema lines', () => {
  it.each(examples)('%s names the schema of its kind', (file) => {
    const schema = named(file, readFileSync(join(PROJECT_ROOT, file), 'utf8'));
    expect(schema, file).toBeDefined();
    const target = resolve(dirname(join(PROJECT_ROOT, file)), schema!);
    expect(target).toBe(join(SCHEMAS_DIR, schemaFileName(kindOf(file)!)));
    expect(existsSync(target)).toBe(true);
  });

  it('stepwise init writes one into every definition file it creates', () => {
    const files = Object.entries(workflowFiles('billing-desk', PROJECT_ROOT)).filter(
      ([file]) => kindOf(file) !== undefined,
    );
    expect(files.map(([f]) => kindOf(f)).sort()).toEqual(['eval-case', 'offline-model', 'workflow']);
    for (const [file, text] of files)
      expect(relative(PROJECT_ROOT, resolve(dirname(join(PROJECT_ROOT, file)), named(file, text)!))).toBe(
        `docs/schemas/${schemaFileName(kindOf(file)!)}`,
      );
  });

  it.each(['api', 'email'])('stepwise new --template %s names the schemas of the installed package', (template) => {
    const files = Object.entries(projectFiles({ template, name: 'p' })).filter(([file]) => kindOf(file) !== undefined);
    expect(files.length).toBeGreaterThanOrEqual(3);
    for (const [file, text] of files)
      expect(relative('/p', resolve(dirname(join('/p', file)), named(file, text)!))).toBe(
        `node_modules/stepwise/docs/schemas/${schemaFileName(kindOf(file)!)}`,
      );
  });
});
