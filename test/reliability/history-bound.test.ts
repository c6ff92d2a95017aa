/** State under 256 KiB is the state-size guard's (state-size tests); history under 25,000 events is this bound's. */
import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { loadWorkflow } from '../../lambdas/lib/workflow/loader.ts';
import { stateMachineOf, synthApp } from '../infra/template.ts';
import { recordFigure } from './figures.ts';
import { HISTORY_EVENT_LIMIT, worstCaseHistoryEvents } from './history.ts';

const { stacks } = synthApp('prod');

describe('execution history', () => {
  it.each(Object.keys(stacks.workflows))('%s: the worst case (every retry exhausted at every step up to the breaker) stays under 25,000 events', (workflow) => {
    const { asl } = stateMachineOf(Template.fromStack(stacks.workflows[workflow]!));
    const bound = worstCaseHistoryEvents(asl, loadWorkflow(workflow).manifest.maxSteps);
    expect(bound).toBeLessThan(HISTORY_EVENT_LIMIT);
    recordFigure(`history bound (${workflow})`, `at most ${bound} events per execution (limit ${HISTORY_EVENT_LIMIT})`);
  });

  it('counts retries, visits and the states the bound cannot cover', () => {
    const task = (retries: number[]) => ({ Type: 'Task', Retry: retries.map((MaxAttempts) => ({ MaxAttempts })) });
    expect(worstCaseHistoryEvents({ States: { S: { Type: 'Pass' }, A: task([]), R: { Type: 'Choice' }, D: { Type: 'Succeed' } } }, 1)).toBe(2 + 2 + 2 * 7 + 2);
    expect(worstCaseHistoryEvents({ States: { A: task([3, 6]) } }, 10)).toBe(2 + 11 * (2 + 30 + 2) + 2);
    expect(() => worstCaseHistoryEvents({ States: { M: { Type: 'Map' } } }, 10)).toThrow(/Map/);
  });
});
