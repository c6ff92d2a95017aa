/** The lifecycle core: applying the sample leads' events to their snapshots, in memory. */
import { loadAgentConfig, loadLifecycle } from '../../../src/definitions/lifecycle/loader.ts';
import type { BenchRun } from '../harness.ts';
import { appliedEvents, applyAll, BENCH_AGENT, bookMeetingLogs } from '../workloads.ts';
import { sink } from './shared.ts';

export async function lifecycleCore(bench: BenchRun): Promise<void> {
  const def = loadLifecycle('lead-lifecycle');
  const config = loadAgentConfig(BENCH_AGENT, 'lead-lifecycle');
  const leads = bookMeetingLogs().map(appliedEvents);
  const events = leads.reduce((n, lead) => n + lead.length, 0);
  await bench.repeated({
    name: 'lifecycle.applyEvent',
    description: `applyEvent over the ${leads.length} ${BENCH_AGENT} sample leads (${events} events, redeliveries removed as the store does), each from initialSnapshot`,
    warmupIterations: 100,
    iterations: 2_000,
    opsPerIteration: events,
    unit: 'events',
    fn: () => {
      for (const lead of leads) sink.total += applyAll(def, config, lead).version;
    },
  });
}
