/**
 * The engine's layers hold: no file of `src/` imports a higher layer, no imports run in a circle
 * (between files, or between the folders of any one folder), and what a Lambda bundles (`runtime/`,
 * with the `stepwise` face) imports nothing of the CDK, the emulator, the evals or the CLI.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  type ImportGraph,
  importGraph,
  LAYERS,
  layerOf,
  layerProblems,
  SRC_DIR,
} from '../../docs/generate/architecture.ts';

const graph = importGraph(SRC_DIR);

describe('the layers of src/', () => {
  it('put every file of src/ in a layer, lowest first: core, definitions, runtime, project, cdk, local, evals, cli', () => {
    expect(LAYERS.map((l) => l.name)).toEqual([
      'core',
      'definitions',
      'runtime',
      'project',
      'cdk',
      'local',
      'evals',
      'cli',
    ]);
    expect(Object.keys(graph).filter((file) => !layerOf(file))).toEqual([]);
    expect(Object.keys(graph).length).toBeGreaterThan(180);
  });

  it('have no import circle and no arrow from a lower layer to a higher one', () => {
    expect(layerProblems(graph)).toEqual([]);
  });

  it('keep what a Lambda bundles apart from the CDK, the emulator, the evals and the CLI', () => {
    const bundled = Object.entries(graph).filter(([file]) => layerOf(file) === 'runtime');
    const reached = bundled.flatMap(([file, imports]) =>
      imports.filter((t) => !['core', 'definitions', 'runtime'].includes(layerOf(t)!)).map((t) => `${file} → ${t}`),
    );
    expect(bundled.length).toBeGreaterThan(60);
    expect(reached).toEqual([]);
  });
});

/** The graph importGraph reads from files with these contents. */
function importGraphOf(files: Record<string, string>): ImportGraph {
  const dir = mkdtempSync(join(tmpdir(), 'stepwise-layers-'));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return importGraph(dir);
}

describe('the layer check (it can fail)', () => {
  const fixture = (extra: ImportGraph): ImportGraph => ({
    'core/errors.ts': [],
    'runtime/steps/runner.ts': ['core/errors.ts'],
    'cdk/constructs/agent.ts': ['runtime/steps/runner.ts'],
    'local/runtime.ts': ['cdk/constructs/agent.ts'],
    ...extra,
  });

  it('passes a tree that keeps the rules', () => {
    expect(layerProblems(fixture({}))).toEqual([]);
  });

  it('names a runtime file that imports the CDK, the emulator or the CLI', () => {
    for (const target of ['cdk/constructs/agent.ts', 'local/runtime.ts', 'cli/main.ts']) {
      const problems = layerProblems(
        fixture({ 'cli/main.ts': [], 'runtime/steps/runner.ts': ['core/errors.ts', target] }),
      );
      expect(problems.some((p) => p.startsWith(`runtime/steps/runner.ts (runtime) imports ${target}`))).toBe(true);
    }
  });

  it('names a circle of files, a type-only import included', () => {
    const problems = layerProblems(
      fixture({ 'runtime/steps/a.ts': ['runtime/steps/b.ts'], 'runtime/steps/b.ts': ['runtime/steps/a.ts'] }),
    );
    expect(problems).toContain('import circle: runtime/steps/a.ts → runtime/steps/b.ts');
    expect(
      importGraphOf({ 'a.ts': "import type { B } from './b.ts';", 'b.ts': "import { a } from './a.ts';" }),
    ).toEqual({ 'a.ts': ['b.ts'], 'b.ts': ['a.ts'] });
  });

  it('names two folders that import each other through different files', () => {
    const problems = layerProblems(
      fixture({
        'runtime/models/offline.ts': ['runtime/steps/runner.ts'],
        'runtime/steps/prompt.ts': ['runtime/models/port.ts'],
        'runtime/models/port.ts': [],
      }),
    );
    expect(problems).toContain('folder circle in runtime: runtime/models ⇄ runtime/steps');
  });
});
