/** The five flows under three orchestrations of the same handlers, interleaved per input. */
import { synthProject } from '../../../src/local/cloud/synth.ts';
import { WorkflowSession } from '../../../src/local/sessions/workflow-session.ts';
import type { BenchRun } from '../harness.ts';
import {
  chainOrchestration,
  emailIngestor,
  FLOW_SAMPLES,
  type FlowRun,
  flowSample,
  langGraphOrchestration,
  type Orchestration,
  runtimeOrchestration,
  timed,
} from '../orchestration.ts';
import { ENV } from './shared.ts';

const ORCHESTRATIONS = ['runtime', 'chain', 'langgraph'] as const;
type OrchestrationName = (typeof ORCHESTRATIONS)[number];

export async function orchestration(bench: BenchRun): Promise<void> {
  synthProject(ENV);
  const rounds = Number(process.env.BENCH_ROUNDS ?? 20);
  // No stored histories: the chain and LangGraph write none either.
  const session = await WorkflowSession.start({
    workflow: 'warranty-email',
    env: ENV,
    model: 'offline',
    logLevel: 'SILENT',
    historyDir: false,
  });
  try {
    const variants: Record<OrchestrationName, Orchestration> = {
      runtime: runtimeOrchestration(session),
      chain: chainOrchestration(session),
      langgraph: langGraphOrchestration(session),
    };
    const ingestEmail = emailIngestor(session);
    const dir = session.workflow.dir;
    const samples: Record<OrchestrationName, number[]> = { runtime: [], chain: [], langgraph: [] };
    const flows = new Map<string, FlowRun>();
    let n = 0;
    const runOnce = async (variant: OrchestrationName, flow: string): Promise<number> => {
      const { input, name } = await ingestEmail(flowSample(dir, flow), `orch-${n++}`);
      const { ms, value } = await timed(() => variants[variant](input, name));
      const first = flows.get(flow);
      if (!first) flows.set(flow, value);
      else if (first.trail.join() !== value.trail.join())
        throw new Error(`${flow} under ${variant} took ${value.trail.join(' → ')}, not ${first.trail.join(' → ')}`);
      return ms;
    };
    // Warm-up: every handler module loaded and JIT-warm under every orchestration.
    for (let r = 0; r < 2; r++) for (const flow of FLOW_SAMPLES) for (const v of ORCHESTRATIONS) await runOnce(v, flow);
    for (let r = 0; r < rounds; r++)
      for (const [i, flow] of FLOW_SAMPLES.entries())
        for (let k = 0; k < ORCHESTRATIONS.length; k++) {
          // Rotate who goes first, so none always runs on a cache another warmed.
          const variant = ORCHESTRATIONS[(r + i + k) % ORCHESTRATIONS.length]!;
          samples[variant].push(await runOnce(variant, flow));
        }
    const describe: Record<OrchestrationName, string> = {
      runtime: 'the local runtime: the synthesized ASL in the interpreter',
      chain: 'a plain in-process loop over the same handlers (Task, ResultSelector, Choice, Catch by hand)',
      langgraph: 'the same graph in LangGraph.js (one node per step, conditional edges, errors to the fallback)',
    };
    const means = {} as Record<OrchestrationName, number>;
    for (const v of ORCHESTRATIONS) {
      means[v] = bench.samples({
        name: `orchestration.${v}`,
        description: `${describe[v]}: the ${FLOW_SAMPLES.length} flow samples, ${rounds} rounds interleaved with the other orchestrations (offline model, DynamoDB Local)`,
        warmupIterations: 2 * FLOW_SAMPLES.length,
        unit: 'emails',
        samples: samples[v],
      }).meanMs;
    }
    const perFlow = Object.fromEntries(
      [...flows].map(([flow, run]) => [
        flow,
        { steps: run.trail, modelCalls: run.usage.modelCalls, usage: run.usage, handlerMs: run.handlerMs },
      ]),
    );
    const calls = FLOW_SAMPLES.map((f) => flows.get(f)!.usage.modelCalls);
    const meanCalls = calls.reduce((a, b) => a + b, 0) / calls.length;
    bench.figures.orchestration = {
      rounds,
      meanMsPerEmail: means,
      runtimeOverChain: means.runtime / means.chain,
      langGraphOverChain: means.langgraph / means.chain,
      runtimeOverheadMsPerEmail: means.runtime - means.chain,
      langGraphOverheadMsPerEmail: means.langgraph - means.chain,
      flows: perFlow,
    };
    bench.target(
      'modelCalls.validWarranty',
      'model calls for the valid-warranty sample (flow 01 → 02 → 03a → 05)',
      flows.get('valid-warranty')!.usage.modelCalls,
      { max: 2 },
    );
    bench.target(
      'modelCalls.meanOverFlows',
      `mean model calls over the ${FLOW_SAMPLES.length} flow samples`,
      meanCalls,
      { max: 1.6 },
    );
    bench.target(
      'orchestration.runtimeOverLangGraph',
      'local runtime time per email / LangGraph.js time per email, interleaved (≤ 1: the runtime keeps its lead)',
      means.runtime / means.langgraph,
      { max: 1 },
    );
  } finally {
    await session.close();
  }
}
