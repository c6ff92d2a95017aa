/** State under 256 KiB is the state-size guard's (state-size tests); history under 25,000 events is this bound's. */
import { describe, expect, it } from 'vitest';
import { listWorkflows, loadWorkflow } from '../../src/definitions/workflow/loader.ts';
import { synthProject } from '../../src/local/cloud/synth.ts';
import { recordFigure } from './figures.ts';
import { HISTORY_EVENT_LIMIT, worstCaseHistoryEvents } from './history.ts';

const app = await synthProject('prod');

describe('execution history', () => {
  it.each(listWorkflows())(
    '%s: the worst case (every retry exhausted at every step up to the breaker) stays under 25,000 events',
    (workflow) => {
      const { definition } = app.stateMachines.find((m) => m.workflowName === workflow)!;
      const def = loadWorkflow(workflow);
      const samples = Math.max(0, ...def.steps.map((s) => s.consensus?.samples ?? 0));
      // Map steps: each Map state `<step>.map` runs at most the step's maxItems.
      const maps = new Map<string, number>(
        def.steps.flatMap((s) => (s.map ? [[`${s.name}.map`, s.map.maxItems]] : [])),
      );
      const items = maps.size ? (state: string) => maps.get(state) ?? 0 : samples;
      const bound = worstCaseHistoryEvents(definition, def.manifest.maxSteps, items);
      expect(bound).toBeLessThan(HISTORY_EVENT_LIMIT);
      recordFigure(
        `history bound (${workflow})`,
        `at most ${bound} events per execution (limit ${HISTORY_EVENT_LIMIT})`,
      );
    },
  );

  it('counts retries, visits and the states the bound cannot cover', () => {
    const task = (retries: number[]) => ({ Type: 'Task', Retry: retries.map((MaxAttempts) => ({ MaxAttempts })) });
    // Two visits, each charged the Task (2 + 3 * 1 attempt) and the Pass and Choice (2 each).
    expect(
      worstCaseHistoryEvents(
        { States: { S: { Type: 'Pass' }, A: task([]), R: { Type: 'Choice' }, D: { Type: 'Succeed' } } },
        1,
      ),
    ).toBe(2 + 2 * (5 + 4) + 2);
    // Eleven visits of a Task with 1 + 3 + 6 attempts.
    expect(worstCaseHistoryEvents({ States: { A: task([3, 6]) } }, 10)).toBe(2 + 11 * (2 + 30) + 2);
    expect(() => worstCaseHistoryEvents({ States: { M: { Type: 'Map' } } }, 10)).toThrow(/Map/);
    expect(() => worstCaseHistoryEvents({ States: { P: { Type: 'Parallel' } } }, 10)).toThrow(/Parallel/);
    // A map step's items and a parallel step's branches run up to the breaker over the whole execution: with one
    // visit (maxSteps 0), the Task (2 + 3), the Map and the Parallel (4 each), 3 items and 2 branches of (2 + 5).
    const chains = {
      States: {
        A: task([]),
        M: { Type: 'Map', ItemProcessor: { States: { T: task([]) } } },
        P: { Type: 'Parallel', Branches: [{ States: { B: task([]) } }, { States: { C: task([]) } }] },
      },
    };
    expect(worstCaseHistoryEvents(chains, 0, (state) => (state === 'M' ? 3 : 0))).toBe(2 + (5 + 8) + 3 * 7 + 2 * 7 + 2);
    const map = { Type: 'Map', ItemProcessor: { States: { T: task([2]) } } };
    // A visit: the busiest Task (2 + 3 * 3), the Map's 4 events, 5 items of (2 + the inner Task's 2 + 3 * 3).
    expect(worstCaseHistoryEvents({ States: { A: task([2]), M: map } }, 1, 5)).toBe(2 + 2 * (11 + 4 + 5 * 13) + 2);
  });
});
