/**
 * A map step fanning out over 100 items on the local runtime: the fan-out fixture's synthesized
 * ASL, its items four at once, each item one code step through the real step handler, then the
 * join and one more step. Items per second; one iteration is one execution.
 */
import { LocalRuntime } from '../../../src/local/asl/runtime.ts';
import { synthesize } from '../../../src/local/cloud/synth.ts';
import { memoryEventLog } from '../../../src/runtime/event-log.ts';
import { memoryValueStore } from '../../../src/runtime/offload.ts';
import {
  addConstructWorkflows,
  CONSTRUCTS_STACK,
  registerConstructWorkflows,
} from '../../fixtures/construct-workflows.ts';
import { FIXTURE_WORKFLOWS } from '../../fixtures/triage-plugin.ts';
import type { BenchRun } from '../harness.ts';
import { sink } from './shared.ts';

const ITEMS = 100;

export async function fanOut(bench: BenchRun): Promise<void> {
  registerConstructWorkflows();
  const runtime = await LocalRuntime.create({
    app: synthesize(addConstructWorkflows),
    historyDir: false,
    extraEnv: { STATEMACHINES_DIR: FIXTURE_WORKFLOWS, MODEL_PROVIDER: 'offline' },
    services: { events: memoryEventLog(), values: memoryValueStore() },
  });
  const input = { attachments: Array.from({ length: ITEMS }, (_, i) => ({ name: `${i}.pdf` })) };
  await bench.repeated({
    name: 'constructs.mapFanOut',
    description: `a map step over ${ITEMS} items (MaxConcurrency 4, one code step each through the step handler), joined, then one more step, on the local runtime`,
    warmupIterations: 2,
    iterations: 10,
    opsPerIteration: ITEMS,
    unit: 'items',
    fn: async () => {
      const execution = await runtime.startExecution(`${CONSTRUCTS_STACK}-fan-out`, input);
      if (execution.status !== 'SUCCEEDED') throw new Error(`fan-out ended ${execution.status}`);
      sink.total += execution.history.length;
    },
  });
}
