/** The cost model's arithmetic, checked by hand against the prices file. */
import { describe, expect, it } from 'vitest';
import { costPer1000, type ExecutionCounts, gbSeconds, loadPrices, meanCounts } from '../../src/evals/cost.ts';

const HAIKU = 'us.anthropic.claude-haiku-4-5-20251001-v1:0';
const prices = loadPrices();
const zero: ExecutionCounts = {
  stateTransitions: 0,
  lambdaInvocations: 0,
  lambdaGbSeconds: 0,
  dynamoReadUnits: 0,
  dynamoWriteUnits: 0,
  modelCalls: 0,
  inputTokens: 0,
  outputTokens: 0,
  cacheReadInputTokens: 0,
  cacheWriteInputTokens: 0,
};

describe('cost per 1,000 executions', () => {
  it('every price cites its source', () => {
    for (const part of [prices.stepFunctions, prices.lambda, prices.dynamodb, ...Object.values(prices.models)])
      expect(part.source).toMatch(/^https:\/\//);
  });

  it('state transitions: 10 per execution at $0.025 per 1,000 → $0.25', () => {
    expect(costPer1000({ ...zero, stateTransitions: 10 }, prices, HAIKU).total).toBeCloseTo(10 * 0.025, 10);
  });

  it('Lambda: requests and GB-seconds of the configured memory', () => {
    expect(gbSeconds(512, 250)).toBe(0.125);
    expect(gbSeconds(1024, 0.2)).toBe(0.001); // billed per started millisecond
    const cost = costPer1000({ ...zero, lambdaInvocations: 5, lambdaGbSeconds: 0.125 }, prices, HAIKU);
    expect(cost.lambdaRequests).toBeCloseTo((5 * 0.2) / 1000, 12);
    expect(cost.lambdaCompute).toBeCloseTo(1000 * 0.125 * 0.0000133334, 12);
  });

  it('DynamoDB on-demand request units', () => {
    const cost = costPer1000({ ...zero, dynamoReadUnits: 8, dynamoWriteUnits: 4 }, prices, HAIKU);
    expect(cost.dynamodb).toBeCloseTo((1000 * (8 * 0.125 + 4 * 0.625)) / 1e6, 12);
  });

  it('model tokens: full-rate input, output, cache reads and writes at their own rates', () => {
    const cost = costPer1000(
      {
        ...zero,
        modelCalls: 1,
        inputTokens: 2000,
        outputTokens: 300,
        cacheReadInputTokens: 5000,
        cacheWriteInputTokens: 0,
      },
      prices,
      HAIKU,
    );
    expect(cost.modelInput).toBeCloseTo(2.0, 10); // 2M tokens × $1/M
    expect(cost.modelOutput).toBeCloseTo(1.5, 10); // 0.3M × $5/M
    expect(cost.modelCacheRead).toBeCloseTo(0.5, 10); // 5M × $0.10/M
    expect(cost.total).toBeCloseTo(4.0, 10);
  });

  it('refuses a model without prices', () => {
    expect(() => costPer1000(zero, prices, 'anthropic.unknown')).toThrow(/no prices/);
  });

  it('averages executions element-wise', () => {
    expect(
      meanCounts([
        { ...zero, modelCalls: 1 },
        { ...zero, modelCalls: 2 },
      ]).modelCalls,
    ).toBe(1.5);
  });
});
