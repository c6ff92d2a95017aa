/**
 * The engine's layers hold: no file of `src/` imports a higher layer, no imports run in a circle
 * (between files, or between the folders of any one folder), what a Lambda bundles (`runtime/`,
 * with the `stepwise` face) imports nothing of the CDK, the emulator, the evals or the CLI, and the
 * emulator (`local/`) keeps to its four rooms. The engine's tests (`test/<layer>/`) name no example
 * workflow: they run on the engine's own fixtures, and `test/examples/` alone tests the examples.
 */
import { mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  type ImportGraph,
  importGraph,
  LAYERS,
  layerOf,
  layerProblems,
  ROOMS,
  roomOf,
  SRC_DIR,
} from '../../docs/generate/architecture.ts';
import { PACKAGE_ROOT } from '../../src/core/paths.ts';
import { ENGINE_TEST_DIRS, exampleMentions, exampleNames, exampleProjectImports } from './examples.ts';

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

describe('the rooms of src/local/', () => {
  it('put every file of the emulator in one of four rooms: the emulated cloud and the records below the interpreter, sessions on top', () => {
    expect(ROOMS.local!.map((r) => [r.name, r.rank])).toEqual([
      ['cloud', 0],
      ['records', 0],
      ['asl', 1],
      ['sessions', 2],
    ]);
    const local = Object.keys(graph).filter((file) => layerOf(file) === 'local');
    expect(local.length).toBeGreaterThan(40);
    expect(local.filter((file) => !roomOf(file))).toEqual([]);
    for (const room of ROOMS.local!) expect(local.some((file) => roomOf(file)?.name === room.name)).toBe(true);
  });

  it('are the folders of test/local/ too, the tests of each room in its own', () => {
    expect(readdirSync(join(PACKAGE_ROOT, 'test/local')).sort()).toEqual(ROOMS.local!.map((r) => r.name).sort());
  });
});

describe('the engine tests', () => {
  const names = exampleNames();

  it('know the examples of this repository by the folders of its statemachines/', () => {
    expect(names).toEqual(expect.arrayContaining(['warranty-email', 'lead-lifecycle']));
  });

  it('name no example workflow and import nothing of the examples project', () => {
    expect(ENGINE_TEST_DIRS).toEqual(expect.arrayContaining(LAYERS.map((l) => `test/${l.name}`)));
    expect(exampleMentions(ENGINE_TEST_DIRS, names)).toEqual([]);
    expect(exampleProjectImports(ENGINE_TEST_DIRS)).toEqual([]);
  });
});

describe('the layer check (it can fail)', () => {
  const fixture = (extra: ImportGraph): ImportGraph => ({
    'core/errors.ts': [],
    'runtime/steps/runner.ts': ['core/errors.ts'],
    'cdk/constructs/agent.ts': ['runtime/steps/runner.ts'],
    'local/asl/runtime.ts': ['cdk/constructs/agent.ts'],
    ...extra,
  });

  it('passes a tree that keeps the rules', () => {
    expect(layerProblems(fixture({}))).toEqual([]);
  });

  it('names a runtime file that imports the CDK, the emulator or the CLI', () => {
    for (const target of ['cdk/constructs/agent.ts', 'local/asl/runtime.ts', 'cli/main.ts']) {
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

  it('names a file of local/ in no room, one that imports a higher room, and rooms of one rank that meet', () => {
    const problems = layerProblems(
      fixture({
        'local/cloud/bus.ts': ['local/records/history.ts'],
        'local/records/history.ts': ['local/asl/runtime.ts'],
        'local/stray.ts': [],
      }),
    );
    expect(problems).toEqual([
      'local/cloud/bus.ts (local/cloud) imports local/records/history.ts (local/records): rooms of one rank import nothing of each other',
      'local/records/history.ts (local/records) imports local/asl/runtime.ts (local/asl): a lower room imports a higher one',
      'local/stray.ts: in no room of local (cloud, records, asl, sessions)',
    ]);
    expect(
      layerProblems(
        fixture({ 'local/cloud/bus.ts': [], 'local/sessions/run.ts': ['local/asl/runtime.ts', 'local/cloud/bus.ts'] }),
      ),
    ).toEqual([]);
  });

  it('names an engine test that names an example in any spelling, or imports a file of the examples project', () => {
    const root = mkdtempSync(join(tmpdir(), 'stepwise-examples-'));
    const write = (file: string, text: string) => {
      mkdirSync(dirname(join(root, file)), { recursive: true });
      writeFileSync(join(root, file), text);
    };
    write('statemachines/parcel-desk/workflow.yaml', 'name: parcel-desk\n');
    write('statemachines/audit/workflow.yaml', 'name: audit\n');
    write(
      'test/runtime/a.test.ts',
      [
        "import { x } from '../../lambdas/workflows/parcel-desk/steps/x.ts';",
        "import config from '../../stepwise.config.ts';",
        "import { y } from '../fixtures/project/lambdas/y.ts';",
        "run('parcel-desk', 'Stepwise-ParcelDesk-dev', PARCEL_DESK);",
        "// an audit of the log, then loadWorkflow('audit')",
      ].join('\n'),
    );
    write('test/fixtures/cases.yaml', 'workflow: parcel_desk\n');
    const names = exampleNames(root);
    expect(names).toEqual(['audit', 'parcel-desk']);
    expect(exampleMentions(['test/runtime', 'test/fixtures'], names, root)).toEqual([
      'test/runtime/a.test.ts:1: parcel-desk',
      'test/runtime/a.test.ts:4: parcel-desk',
      'test/runtime/a.test.ts:4: ParcelDesk',
      'test/runtime/a.test.ts:4: PARCEL_DESK',
      'test/runtime/a.test.ts:5: audit',
      'test/fixtures/cases.yaml:1: parcel_desk',
    ]);
    expect(exampleProjectImports(['test/runtime'], root)).toEqual([
      'test/runtime/a.test.ts → lambdas/workflows/parcel-desk/steps/x.ts',
      'test/runtime/a.test.ts → stepwise.config.ts',
    ]);
  });
});
