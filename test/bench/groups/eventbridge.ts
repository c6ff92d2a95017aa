/** EventBridge pattern matching: the lifecycle stack's rule patterns against the leads bus's envelopes. */
import { lifecycleBusName, lifecycleStackName } from '../../../src/cdk/names.ts';
import { loadAgentConfig, loadLifecycle } from '../../../src/definitions/lifecycle/loader.ts';
import { compilePattern, matches } from '../../../src/local/cloud/eventbridge/pattern.ts';
import { synthProject } from '../../../src/local/cloud/synth.ts';
import type { BenchRun } from '../harness.ts';
import { BENCH_AGENT, bookMeetingLogs, leadBusEnvelopes } from '../workloads.ts';
import { ENV, LEAD_LIFECYCLE, sink } from './shared.ts';

export async function eventBridge(bench: BenchRun): Promise<void> {
  const template = (await synthProject(ENV)).templates[lifecycleStackName(LEAD_LIFECYCLE, ENV)];
  if (!template) throw new Error(`the ${ENV} app has no ${lifecycleStackName(LEAD_LIFECYCLE, ENV)} stack`);
  // The rules' patterns as the template declares them (the bus compiles the same values).
  const patterns = Object.values(template.Resources ?? {})
    .filter((r) => r.Type === 'AWS::Events::Rule' && r.Properties?.EventPattern !== undefined)
    .map((r) => r.Properties!.EventPattern);
  const def = loadLifecycle('lead-lifecycle');
  const envelopes = await leadBusEnvelopes(
    template,
    lifecycleBusName(LEAD_LIFECYCLE, ENV),
    def,
    loadAgentConfig(BENCH_AGENT, 'lead-lifecycle'),
    bookMeetingLogs(),
  );
  const pairs = envelopes.length * patterns.length;
  const matchers = patterns.map((p) => compilePattern(p));
  const matched = envelopes.reduce((n, e) => n + matchers.filter((m) => m(e)).length, 0);
  if (matched === 0) throw new Error('no envelope matches any rule: the workload measures nothing');
  const workload = `${envelopes.length} leads-bus envelopes × ${patterns.length} rule patterns of the lifecycle stack (${matched} matches)`;

  await bench.repeated({
    name: 'eventbridge.compilePattern',
    description: `compilePattern of the ${patterns.length} rule patterns of the lifecycle stack`,
    warmupIterations: 200,
    iterations: 5_000,
    opsPerIteration: patterns.length,
    unit: 'patterns',
    fn: () => {
      for (const p of patterns) sink.total += compilePattern(p).length;
    },
  });
  await bench.repeated({
    name: 'eventbridge.match.compiled',
    description: `compiled matchers (what the local bus runs per event): ${workload}`,
    warmupIterations: 200,
    iterations: 5_000,
    opsPerIteration: pairs,
    unit: 'matches',
    fn: () => {
      for (const e of envelopes) for (const m of matchers) sink.total += m(e) ? 1 : 0;
    },
  });
  await bench.repeated({
    name: 'eventbridge.matches.oneShot',
    description: `matches(pattern, event), which validates and compiles on every call: ${workload}`,
    warmupIterations: 20,
    iterations: 500,
    opsPerIteration: pairs,
    unit: 'matches',
    fn: () => {
      for (const e of envelopes) for (const p of patterns) sink.total += matches(p, e) ? 1 : 0;
    },
  });
}
