/**
 * The cost model: what 1,000 executions of a workflow cost, from counts measured per execution
 * (the bench measures them on the local runtime) and the list prices of `prices.json`. Pure
 * arithmetic: no clock, no AWS.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as z from 'zod';

const Price = z.number().nonnegative();
const ModelPrices = z
  .object({
    inputPerMillion: Price,
    outputPerMillion: Price,
    cacheWritePerMillion: Price,
    cacheReadPerMillion: Price,
    /** Bedrock caches a prefix only from this many tokens on (per cache checkpoint). */
    minCacheTokens: z.number().int().positive(),
    source: z.string().min(1),
  })
  .strict();

/** `src/evals/prices.json`: every price with the page it was taken from. */
export const PricesSchema = z
  .object({
    description: z.string(),
    region: z.string(),
    checked: z.iso.date(),
    stepFunctions: z.object({ standardPerStateTransition: Price, source: z.string().min(1) }).strict(),
    lambda: z.object({ perRequest: Price, perGbSecondArm64: Price, source: z.string().min(1) }).strict(),
    dynamodb: z.object({ perWriteRequestUnit: Price, perReadRequestUnit: Price, source: z.string().min(1) }).strict(),
    models: z.record(z.string(), ModelPrices),
  })
  .strict();
export type Prices = z.infer<typeof PricesSchema>;

export const PRICES_FILE = join(dirname(fileURLToPath(import.meta.url)), 'prices.json');

/** The prices file, checked. */
export function loadPrices(file: string = PRICES_FILE): Prices {
  return PricesSchema.parse(JSON.parse(readFileSync(file, 'utf8')));
}

/** What one execution used (means over a workload are fine: the model is linear). */
export interface ExecutionCounts {
  /** Standard workflows bill every state entered. */
  stateTransitions: number;
  lambdaInvocations: number;
  /** Σ configured memory (GB) × billed duration (s) over the invocations. */
  lambdaGbSeconds: number;
  /** Request units: one per read of up to 4 KB (strongly consistent) / write of up to 1 KB. */
  dynamoReadUnits: number;
  dynamoWriteUnits: number;
  modelCalls: number;
  /** Input tokens billed at the full rate (Converse `inputTokens`: neither read from nor written to the cache). */
  inputTokens: number;
  outputTokens: number;
  cacheReadInputTokens: number;
  cacheWriteInputTokens: number;
}

/** USD per 1,000 executions, by what is billed. */
export interface CostPer1000 {
  stepFunctions: number;
  lambdaRequests: number;
  lambdaCompute: number;
  dynamodb: number;
  modelInput: number;
  modelOutput: number;
  modelCacheRead: number;
  modelCacheWrite: number;
  total: number;
}

/** GB-seconds of one invocation: Lambda bills the configured memory for the duration, rounded up to the millisecond. */
export const gbSeconds = (memoryMb: number, durationMs: number) => (memoryMb / 1024) * (Math.ceil(durationMs) / 1000);

/**
 * The cost of 1,000 executions with these counts each.
 * @throws Error when `modelId` has no prices (add it to prices.json with its source).
 * @example costPer1000(counts, loadPrices(), 'us.anthropic.claude-haiku-4-5-20251001-v1:0').total
 */
export function costPer1000(counts: ExecutionCounts, prices: Prices, modelId: string): CostPer1000 {
  const n = 1000;
  const model = modelCost(counts, prices, modelId);
  const parts = {
    stepFunctions: n * counts.stateTransitions * prices.stepFunctions.standardPerStateTransition,
    lambdaRequests: n * counts.lambdaInvocations * prices.lambda.perRequest,
    lambdaCompute: n * counts.lambdaGbSeconds * prices.lambda.perGbSecondArm64,
    dynamodb:
      n *
      (counts.dynamoReadUnits * prices.dynamodb.perReadRequestUnit +
        counts.dynamoWriteUnits * prices.dynamodb.perWriteRequestUnit),
    modelInput: n * model.input,
    modelOutput: n * model.output,
    modelCacheRead: n * model.cacheRead,
    modelCacheWrite: n * model.cacheWrite,
  };
  return { ...parts, total: Object.values(parts).reduce((a, b) => a + b, 0) };
}

/** Token counts as a model call (or a step, or an execution) reports them. */
export type TokenCounts = Pick<
  ExecutionCounts,
  'inputTokens' | 'outputTokens' | 'cacheReadInputTokens' | 'cacheWriteInputTokens'
>;

/** USD of these tokens at a model's list prices, by what is billed. */
export interface ModelCost {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  total: number;
}

/**
 * What these tokens cost at `modelId`'s list prices (Studio shows it per step and per execution).
 * @throws Error when `modelId` has no prices (add it to prices.json with its source).
 */
export function modelCost(tokens: TokenCounts, prices: Prices, modelId: string): ModelCost {
  const model = prices.models[modelId];
  if (!model)
    throw new Error(`no prices for model ${modelId} in prices.json (known: ${Object.keys(prices.models).join(', ')})`);
  const perToken = (perMillion: number) => perMillion / 1_000_000;
  const parts = {
    input: tokens.inputTokens * perToken(model.inputPerMillion),
    output: tokens.outputTokens * perToken(model.outputPerMillion),
    cacheRead: tokens.cacheReadInputTokens * perToken(model.cacheReadPerMillion),
    cacheWrite: tokens.cacheWriteInputTokens * perToken(model.cacheWritePerMillion),
  };
  return { ...parts, total: parts.input + parts.output + parts.cacheRead + parts.cacheWrite };
}

/** The element-wise mean of several executions' counts. */
export function meanCounts(all: readonly ExecutionCounts[]): ExecutionCounts {
  const keys = Object.keys(all[0] ?? {}) as (keyof ExecutionCounts)[];
  return Object.fromEntries(
    keys.map((k) => [k, all.reduce((sum, c) => sum + c[k], 0) / all.length]),
  ) as unknown as ExecutionCounts;
}
