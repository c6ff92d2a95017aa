/** Workflow loading: reading, parsing and validating a workflow's manifest and step files. */
import { join } from 'node:path';
import { STATEMACHINES_DIR } from '../../../src/core/paths.ts';
import { loadWorkflowFrom } from '../../../src/definitions/workflow/loader.ts';
import type { BenchRun } from '../harness.ts';
import { sink } from './shared.ts';

export async function workflowLoading(bench: BenchRun): Promise<void> {
  const dir = join(STATEMACHINES_DIR, 'warranty-email');
  const steps = loadWorkflowFrom(dir).steps.length;
  await bench.repeated({
    name: 'workflow.loadWorkflowFrom',
    description: `loadWorkflowFrom(statemachines/warranty-email), uncached: read, parse and validate the manifest and ${steps} step files`,
    warmupIterations: 20,
    iterations: 200,
    unit: 'loads',
    fn: () => {
      sink.total += loadWorkflowFrom(dir).steps.length;
    },
  });
}
