/** Cost per 1,000 executions from measured counts: fast path on (as deployed) and off (model path). */
import { join } from 'node:path';
import { STATEMACHINES_DIR } from '../../../src/core/paths.ts';
import { loadWorkflowFrom } from '../../../src/definitions/workflow/loader.ts';
import { costPer1000, type ExecutionCounts, gbSeconds, loadPrices, meanCounts } from '../../../src/evals/cost.ts';
import { synthProject } from '../../../src/local/cloud/synth.ts';
import { stateTransitions, stepTrail } from '../../../src/local/records/history.ts';
import { executionUsage, WorkflowSession } from '../../../src/local/sessions/workflow-session.ts';
import { routeToolSpec, systemPrompt, toolSpecs } from '../../../src/runtime/contracts/prompt.ts';
import type { StepOutput } from '../../../src/runtime/contracts/step.ts';
import { OfflineModel } from '../../../src/runtime/models/offline.ts';
import { loadPlugin } from '../../../src/runtime/plugin.ts';
import { singlePromptStep } from '../../../src/runtime/steps/single-prompt.ts';
import { exampleEnv } from '../../examples/support/config.ts';
import type { BenchRun } from '../harness.ts';
import { emailIngestor, FLOW_SAMPLES, flowSample, timed } from '../orchestration.ts';
import { countDynamoRequests, estimatingModel } from '../usage.ts';
import { ENV } from './shared.ts';

/** The model the cost is computed for: the id the environment config pins (see stepwise.config.ts). */
const COST_MODEL_ID =
  exampleEnv(ENV).modelId ?? loadWorkflowFrom(join(STATEMACHINES_DIR, 'warranty-email')).manifest.model.id;

/** Configured memory of each step's function and of the email ingress, from the synthesized template. */
async function functionMemory(workflow: string): Promise<{ steps: Record<string, number>; ingressMb: number }> {
  const app = await synthProject(ENV);
  const machine = app.stateMachines.find((m) => m.workflowName === workflow)!;
  const resources = Object.values(app.templates[machine.stack]!.Resources ?? {}).filter(
    (r) => r.Type === 'AWS::Lambda::Function',
  );
  const env = (r: (typeof resources)[number]) =>
    (r.Properties?.Environment as { Variables?: Record<string, unknown> })?.Variables ?? {};
  const memory = (r: (typeof resources)[number]) => Number(r.Properties?.MemorySize ?? 128);
  const steps = Object.fromEntries(
    resources.filter((r) => typeof env(r).STEP === 'string').map((r) => [String(env(r).STEP), memory(r)]),
  );
  const ingress = resources.find((r) => String(r.Metadata?.['stepwise:entry'] ?? '').includes('triggers/email'));
  return { steps, ingressMb: ingress ? memory(ingress) : 512 };
}

async function costOf(
  mode: 'fast path' | 'model path',
  rounds: number,
): Promise<{ perFlow: Record<string, ExecutionCounts>; largestPrefixTokens: number }> {
  const prices = loadPrices();
  const minCache = prices.models[COST_MODEL_ID]?.minCacheTokens ?? 4096;
  const def = loadWorkflowFrom(join(STATEMACHINES_DIR, 'warranty-email'));
  const model = estimatingModel(OfflineModel.forWorkflow(def), minCache);
  const memory = await functionMemory('warranty-email');
  const session = await WorkflowSession.start({
    workflow: 'warranty-email',
    env: ENV,
    model: 'offline',
    logLevel: 'SILENT',
    historyDir: false,
    services: { model },
    ...(mode === 'model path' && { localEnv: { FAST_PATHS: 'off' } }),
  });
  const perFlow: Record<string, ExecutionCounts[]> = {};
  try {
    const ingestEmail = emailIngestor(session);
    let n = 0;
    for (let r = 0; r < rounds + 1; r++)
      for (const flow of FLOW_SAMPLES) {
        const dynamo = countDynamoRequests();
        try {
          const ingested = await timed(() =>
            ingestEmail(flowSample(def.dir, flow), `cost-${mode.replace(' ', '-')}-${n++}`),
          );
          const { input, name } = ingested.value;
          const execution = await session.runtime.startExecution(def.manifest.name, input, { name });
          if (r === 0) continue; // warm-up round: module loading is not what an execution costs
          const steps = stepTrail(execution.history).flatMap((s) => (s.output ? [s.output as StepOutput] : []));
          const usage = executionUsage(steps.map((s) => ({ usage: s.usage }) as never));
          const counts: ExecutionCounts = {
            stateTransitions: stateTransitions(execution.history),
            lambdaInvocations: steps.length + 1,
            lambdaGbSeconds:
              gbSeconds(memory.ingressMb, ingested.ms) +
              steps.reduce((sum, s) => sum + gbSeconds(memory.steps[s.step] ?? 512, s.durationMs), 0),
            dynamoReadUnits: dynamo.reads,
            dynamoWriteUnits: dynamo.writes,
            ...usage,
          };
          (perFlow[flow] ??= []).push(counts);
        } finally {
          dynamo.stop();
        }
      }
  } finally {
    await session.close();
  }
  return {
    perFlow: Object.fromEntries(Object.entries(perFlow).map(([f, all]) => [f, meanCounts(all)])),
    largestPrefixTokens: model.largestPrefixTokens,
  };
}

export async function cost(bench: BenchRun): Promise<void> {
  const rounds = Math.max(1, Math.round(Number(process.env.BENCH_ROUNDS ?? 20) / 5));
  const prices = loadPrices();
  const modes = {} as Record<'fastPath' | 'modelPath', unknown>;
  let cachedShare = 0;
  let largestPrefix = 0;
  for (const [key, mode] of [
    ['fastPath', 'fast path'],
    ['modelPath', 'model path'],
  ] as const) {
    const measured = await costOf(mode, rounds);
    const counts = meanCounts(Object.values(measured.perFlow));
    const perFlowCost = Object.fromEntries(
      Object.entries(measured.perFlow).map(([f, c]) => [
        f,
        { counts: c, costPer1000: costPer1000(c, prices, COST_MODEL_ID) },
      ]),
    );
    const input = counts.inputTokens + counts.cacheReadInputTokens + counts.cacheWriteInputTokens;
    if (key === 'fastPath') {
      cachedShare = input ? counts.cacheReadInputTokens / input : 0;
      largestPrefix = measured.largestPrefixTokens;
    }
    modes[key] = { meanCounts: counts, costPer1000: costPer1000(counts, prices, COST_MODEL_ID), flows: perFlowCost };
    process.stderr.write(`  ✓ cost.${key} (${rounds} rounds of ${FLOW_SAMPLES.length} flows)\n`);
  }
  const minCache = prices.models[COST_MODEL_ID]?.minCacheTokens ?? 0;
  // The single-prompt agent's static prefix, as it would be sent: the whole instruction set and every tool.
  const plugin = await loadPlugin('warranty-email');
  const legacy = singlePromptStep(plugin.def);
  const legacyPrefixTokens = Math.ceil(
    JSON.stringify([
      {
        tools: [...toolSpecs(legacy.tools.map((t) => plugin.tools[t]!)), routeToolSpec(legacy)].map((toolSpec) => ({
          toolSpec,
        })),
      },
      systemPrompt(legacy).filter((b) => !('cachePoint' in b)),
    ]).length / 4,
  );
  bench.figures.cost = {
    modelId: COST_MODEL_ID,
    prices: { file: 'evals/prices.json', checked: prices.checked, region: prices.region },
    workload: `mean over the ${FLOW_SAMPLES.length} flow samples, each an execution of the local runtime with its ingress; tokens estimated at 4 characters per token (the offline stand-in reports none); Lambda GB-seconds from the handlers' measured time, which with the offline model contains no model latency`,
    ...modes,
    monolithic: {
      promptPrefixTokensPerCall: legacyPrefixTokens,
      note: 'the single-prompt agent resends this prefix with every call of its tool loop (one per tool round trip: 4 for a valid warranty); run `stepwise eval warranty-email --mode ab --model bedrock` for its pass rate and measured usage',
    },
    caching: {
      minCacheTokens: minCache,
      largestCacheablePrefixTokens: largestPrefix,
      cachedShareOfInputTokens: cachedShare,
      why:
        largestPrefix < minCache
          ? `no step's static prefix (tools + system prompt, at most ${largestPrefix} tokens) reaches the ${minCache}-token minimum: Bedrock caches nothing`
          : 'prefixes reach the minimum',
    },
  };
  const fast = (modes.fastPath as { costPer1000: { total: number } }).costPer1000.total;
  const slow = (modes.modelPath as { costPer1000: { total: number } }).costPer1000.total;
  bench.target(
    'cost.fastPathOverModelPath',
    'cost per 1,000 executions with the fast path / with the model deciding step 01 (≤ 1: the fast path pays for itself)',
    fast / slow,
    { max: 1 },
  );
}
