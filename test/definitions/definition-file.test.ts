/** Reading definition files: duplicate keys, and one parse per file and content however many readers. */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  compileDefinitions,
  parseDefinitionYaml,
  parseFrontmatter,
  readDefinitionYaml,
} from '../../src/definitions/definition-file.ts';
import { useTempDirs } from '../support/tmp.ts';

const tempDir = useTempDirs('stepwise-definition-file-');

describe('duplicate keys', () => {
  it('are refused in one line naming the key, its line and column, and the line of the first', () => {
    expect(() => parseDefinitionYaml('a: 1\nb:\n  c: 1\n  d: 2\n  c: 3\n', 'x.yaml')).toThrow(
      /^x\.yaml: \(yaml\): line 5, column 3: duplicate key "c" \(first at line 3\)$/,
    );
  });

  it('are found in flow maps and in maps inside lists, and counted from the file in frontmatter', () => {
    expect(() => parseDefinitionYaml('list:\n  - { a: 1, b: 2, a: 3 }\n', 'x.yaml')).toThrow(
      'line 2, column 19: duplicate key "a" (first at line 2)',
    );
    expect(() => parseFrontmatter('---\nname: s\ntools: []\nname: t\n---\nBody', 'steps/s.md')).toThrow(
      'steps/s.md: (yaml): line 4, column 1: duplicate key "name" (first at line 2)',
    );
  });

  it('are keys equal as values: the same name in two maps, or 1 and "1", is no duplicate', () => {
    expect(parseDefinitionYaml('a: { x: 1 }\nb: { x: 2 }\n1: one\n"1": two\n', 'x.yaml')).toEqual({
      a: { x: 1 },
      b: { x: 2 },
      1: 'two',
    });
  });

  it('leave a syntax error to the parser, with its line', () => {
    expect(() => parseDefinitionYaml('a: [1, 2\nb: 3\n', 'x.yaml')).toThrow(
      /^x\.yaml: \(yaml\): line \d+, column \d+: /,
    );
  });
});

describe('one parse per file and content', () => {
  it('gives every reader of the same text the same value, frozen so no reader changes another’s', () => {
    const text = 'states:\n  a: { on: { go: b } }\n';
    const first = parseDefinitionYaml(text, 'chart.yaml') as { states: { a: { on: object } } };
    expect(parseDefinitionYaml(`${text}`, 'chart.yaml')).toBe(first);
    expect(Object.isFrozen(first.states.a.on)).toBe(true);
    expect(parseDefinitionYaml('states: {}\n', 'chart.yaml')).toEqual({ states: {} });
  });

  it('reads a file again when its content changed', () => {
    const file = join(tempDir(), 'manifest.yaml');
    writeFileSync(file, 'version: 1\n');
    const first = readDefinitionYaml(file);
    expect(readDefinitionYaml(file)).toBe(first);
    writeFileSync(file, 'version: 2\n');
    expect(readDefinitionYaml(file)).toEqual({ version: 2 });
  });

  it('compiles a workflow folder for every bundle from one parse of each file', () => {
    const dir = join(tempDir(), 'flow');
    mkdirSync(join(dir, 'steps'), { recursive: true });
    writeFileSync(join(dir, 'workflow.yaml'), 'name: flow\n');
    writeFileSync(join(dir, 'steps', 'a.md'), '---\nname: a\n---\nDo it.\n');
    const [one, two] = [compileDefinitions(dir), compileDefinitions(dir)];
    expect(two['flow/workflow.yaml']).toBe(one['flow/workflow.yaml']);
    expect((two['flow/steps/a.md'] as { frontmatter: unknown }).frontmatter).toBe(
      (one['flow/steps/a.md'] as { frontmatter: unknown }).frontmatter,
    );
  });
});
