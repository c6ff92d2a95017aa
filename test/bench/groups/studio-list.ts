/**
 * Studio's executions list over 5,000 local executions: the first listing (every record file read),
 * the list again (the index reads only what changed) and a text search for one subject among
 * them, each through the Studio server as the Executions view asks for it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startStudio } from '../../../src/cli/studio/server.ts';
import { type ExecutionRecord, writeLocalExecution } from '../../../src/local/records/history.ts';
import { stateDirs } from '../../../src/local/records/state-dirs.ts';
import { recordedExecution } from '../../support/fixtures.ts';
import type { BenchRun } from '../harness.ts';
import { fixtureWorkflows } from '../studio.ts';

const EXECUTIONS = 5000;

/** The recorded valid case-desk execution as the `i`th of many: its own name and subject. */
function copyOf(base: ExecutionRecord, i: number): ExecutionRecord {
  const name = `bench-list-${String(i).padStart(5, '0')}`;
  const input = base.input as { email: Record<string, unknown> };
  return {
    ...base,
    name,
    executionArn: base.executionArn.replace(base.name, name),
    input: { ...input, email: { ...input.email, subject: `Case ${i}: desk lamp broken again` } },
  };
}

interface Listed {
  total: number;
  executions: { name: string }[];
}

export async function studioList(bench: BenchRun): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), 'stepwise-bench-list-'));
  const dirs = stateDirs(root);
  const base = recordedExecution('case-desk-valid');
  for (let i = 0; i < EXECUTIONS; i++) writeLocalExecution(copyOf(base, i), dirs.executions);
  const studio = await startStudio({ port: 0, dirs, workflows: await fixtureWorkflows() });
  const list = async (query: string): Promise<Listed> =>
    (await (await fetch(`${studio.url}api/executions?${query}`)).json()) as Listed;
  const wanted = `Case ${EXECUTIONS - 7}:`;
  try {
    const first = await bench.once({
      name: 'studio.list.first',
      description: `GET the executions list over ${EXECUTIONS} local executions, the first time: every record file read`,
      fn: () => list(''),
    });
    if (first?.total !== EXECUTIONS) throw new Error(`the list has ${first?.total} executions, not ${EXECUTIONS}`);
    const again = await bench.repeated({
      name: 'studio.list.again',
      description: `GET the executions list over ${EXECUTIONS} local executions again (nothing changed)`,
      warmupIterations: 2,
      iterations: 20,
      unit: 'lists',
      fn: async () => {
        await list('');
      },
    });
    const found = await list(`q=${encodeURIComponent(wanted)}`);
    if (found.total !== 1) throw new Error(`searching "${wanted}" finds ${found.total} executions, not 1`);
    const search = await bench.repeated({
      name: 'studio.list.search',
      description: `GET the executions whose inputs, outputs or replies hold "${wanted}", among ${EXECUTIONS}`,
      warmupIterations: 2,
      iterations: 20,
      unit: 'searches',
      fn: async () => {
        await list(`q=${encodeURIComponent(wanted)}`);
      },
    });
    bench.figures.studioList = {
      executions: EXECUTIONS,
      againP95Ms: again?.p95Ms ?? null,
      searchP95Ms: search?.p95Ms ?? null,
    };
    bench.target(
      'studio.search5000',
      `a text search over ${EXECUTIONS} executions in Studio's list, p95 ms (through the server)`,
      search?.p95Ms ?? null,
      { max: 1000 },
    );
  } finally {
    await studio.close();
    rmSync(root, { recursive: true, force: true });
  }
}
