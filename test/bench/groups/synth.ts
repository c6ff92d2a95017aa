/** In-process synth of the project app: cold, fresh and cached. */
import { addStepwiseStacks } from '../../../src/cdk/stepwise-app.ts';
import { synthesize, synthProject } from '../../../src/local/cloud/synth.ts';
import { loadProject } from '../../../src/project/project.ts';
import { exampleEnv } from '../../examples/support/config.ts';
import type { BenchRun } from '../harness.ts';
import { ENV, sink } from './shared.ts';

const project = await loadProject();

export async function synth(bench: BenchRun): Promise<void> {
  // Must be the process's first synth to be cold: synthProject caches per environment.
  await bench.once({
    name: 'synth.project.first',
    description: `synthProject('${ENV}') first call in the process: JIT-cold build and synth of every stack, then cached`,
    unit: 'synths',
    fn: () => synthProject(ENV),
  });
  // synthesize() has no cache: the same build synthProject runs, but warm.
  await bench.repeated({
    name: 'synth.project.fresh',
    description: `synthesize(addStepwiseStacks(app, exampleEnv('${ENV}'), project)): a full synth of every stack, bypassing the cache`,
    warmupIterations: 1,
    iterations: 15,
    unit: 'synths',
    fn: () => {
      const app = synthesize((app) => addStepwiseStacks(app, exampleEnv(ENV), project), { env: ENV });
      sink.total += app.stateMachines.length;
    },
  });
  // A cache hit takes less than the timer's own overhead: time them in batches.
  const BATCH = 1_000;
  await bench.repeated({
    name: 'synth.project.cached',
    description: `synthProject('${ENV}') once cached (what every later session start pays), ${BATCH} calls per iteration`,
    warmupIterations: 10,
    iterations: 1_000,
    opsPerIteration: BATCH,
    unit: 'calls',
    fn: async () => {
      for (let i = 0; i < BATCH; i++) sink.total += (await synthProject(ENV)).stateMachines.length;
    },
  });
}
