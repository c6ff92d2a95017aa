import { describe, expect, it } from 'vitest';
import { compareEvalRuns, comparisonText } from '../../src/evals/compare.ts';
import { junitXml } from '../../src/evals/junit.ts';
import type { EvalReport } from '../../src/evals/runner.ts';

const usage = (input: number, output: number) => ({
  modelCalls: 1,
  inputTokens: input,
  outputTokens: output,
  cacheReadInputTokens: 0,
  cacheWriteInputTokens: 0,
});
const report = (model: string, second: { passed: boolean; next: string; tokens: number }): EvalReport => ({
  run: { workflow: 'w', provider: 'bedrock', model, mode: 'step' },
  passed: second.passed ? 2 : 1,
  failed: second.passed ? 0 : 1,
  total: 2,
  cases: [
    {
      id: 'a_001',
      passed: true,
      durationMs: 100,
      failures: [],
      steps: [{ name: '01', next: '02', decidedBy: 'model', fields: {}, usage: usage(1000, 100) }],
    },
    {
      id: 'b_001',
      passed: second.passed,
      durationMs: 300,
      failures: second.passed
        ? []
        : [
            {
              index: 0,
              step: '01',
              expected: 'NEXT_STEP: 02',
              actual: `NEXT_STEP: ${second.next}`,
              why: 'routed <elsewhere> & "wrong"',
            },
          ],
      steps: [{ name: '01', next: second.next, decidedBy: 'model', fields: {}, usage: usage(second.tokens, 100) }],
    },
  ],
});

describe('eval --compare', () => {
  it('puts pass rate, tokens, model cost and latency side by side, and lists the cases that differ', () => {
    const a = report('us.anthropic.claude-haiku-4-5-20251001-v1:0', { passed: true, next: '02', tokens: 1000 });
    const b = report('llama3.1:8b', { passed: false, next: '03', tokens: 3000 });
    const c = compareEvalRuns(a, b);
    expect(c.a).toMatchObject({
      passRate: 1,
      modelCalls: 1,
      inputTokens: 1000,
      outputTokens: 100,
      latencyMs: { mean: 200, median: 200 },
    });
    expect(c.a.modelCostPer1000).toBeGreaterThan(0);
    expect(c.b).toMatchObject({ passRate: 0.5, inputTokens: 2000, modelCostPer1000: null });
    expect(c.cases).toEqual([
      {
        id: 'b_001',
        differs: ['passed', 'route', 'tokens'],
        a: { passed: true, route: '01→02', tokens: 1100 },
        b: { passed: false, route: '01→03', tokens: 3100 },
      },
    ]);
    expect(c.routeDifferences).toEqual([{ id: 'b_001', a: '01→02', b: '01→03' }]);
    const text = comparisonText(c);
    expect(text).toContain('B: bedrock llama3.1:8b, step mode\n   pass rate 1/2 (50%)');
    expect(text).toContain('model cost per 1,000 cases n/a (no list price)');
    expect(text).toContain('  b_001 (passed, route, tokens)');
  });
});

describe('eval --junit', () => {
  it('writes one testcase per case, a failure with its assertions, escaped', () => {
    const xml = junitXml(report('m', { passed: false, next: '03', tokens: 10 }), 'w');
    expect(xml).toContain('<testsuite name="w" tests="2" failures="1" errors="0" skipped="0" time="0.400">');
    expect(xml).toContain('<testcase classname="stepwise.eval.w" name="a_001" time="0.100"/>');
    expect(xml).toContain(
      '<failure message="routed &lt;elsewhere&gt; &amp; &quot;wrong&quot;">step 1 (01): routed &lt;elsewhere&gt;',
    );
    expect(xml).toContain('<property name="model" value="bedrock m"/>');
  });
});
