import { describe, expect, it } from 'vitest';
import { ALL_RUNS_NOTE, nodeFiguresText, runSeconds, stepsText } from '../../../src/cli/studio/ui/figures.ts';

const steps = [
  { index: 0, kind: 'llm', enteredAt: '2026-01-01T10:00:00.000Z' },
  { index: 1, kind: 'code', enteredAt: '2026-01-01T10:05:00.000Z' },
  { index: 2, kind: 'pause', enteredAt: '2026-01-01T10:05:01.000Z' },
  { index: 3, kind: 'code', enteredAt: '2026-01-01T10:05:02.000Z' },
];

describe("an execution's header figures", () => {
  it('measures a run from its start to its stop', () => {
    const record = { startDate: '2026-01-01T10:00:00.000Z', stopDate: '2026-01-01T10:05:03.000Z' };
    expect(runSeconds(record, steps)).toBe(303);
  });

  it("measures a fork from the step it re-ran, not from its parent's start", () => {
    const fork = { startDate: '2026-01-01T10:00:00.000Z', stopDate: '2026-01-01T10:05:03.500Z', parent: { index: 1 } };
    expect(runSeconds(fork, steps)).toBe(3.5);
  });

  it('has no duration while the execution runs', () => {
    expect(runSeconds({ startDate: '2026-01-01T10:00:00.000Z' }, steps)).toBeUndefined();
  });

  it('counts every row of the steps list, pauses named apart', () => {
    expect(stepsText(steps)).toBe('3 steps and 1 pause');
    expect(stepsText(steps.slice(0, 1))).toBe('1 step');
  });

  it("labels a graph node's figures as all runs' in one execution's graph", () => {
    const stats = { runs: 12, meanDurationMs: 340.4, inputTokens: 400, outputTokens: 100 };
    expect(nodeFiguresText(stats, false)).toBe('12 runs · 340 ms · 500 tok');
    expect(nodeFiguresText(stats, true)).toBe('all 12 runs · 340 ms · 500 tok');
    expect(ALL_RUNS_NOTE).toContain('not this one');
  });
});
