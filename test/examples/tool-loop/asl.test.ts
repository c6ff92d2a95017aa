/**
 * The tool loop's synthesized ASL: the manifest counter compiles to `$.counters`, a Pass that
 * resets it on entering 01-start-group, a Choice before 02-select-tool that ends in the
 * `IterationLimit` outcome at 6 (a Pass into 05-respond) (not MaxStepsExceeded), and a Pass that increments it; the
 * consensus option compiles to inline Map waves whose samples invoke the step's own Lambda with a
 * temperature, a tally between waves, and the vote in the step's own Task. The warranty workflow,
 * which uses neither, compiles as before. Counter definitions are checked against the graph.
 */
import { createRequire } from 'node:module';
import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { routeStateName } from '../../../src/cdk/constructs/agent-workflow.ts';
import { DefinitionError, TRANSIENT_ERRORS } from '../../../src/core/errors.ts';
import { validateCounters } from '../../../src/definitions/workflow/counters.ts';
import { loadWorkflow } from '../../../src/definitions/workflow/loader.ts';
import { workflowToMermaid } from '../../../src/definitions/workflow/mermaid.ts';
import { stateMachineOf } from '../../support/app.ts';
import { synthApp } from '../support/app.ts';

const validateAsl = createRequire(import.meta.url)('asl-validator') as (definition: unknown) => {
  isValid: boolean;
  errorsText: (separator?: string) => string;
};

const { stacks, template: warrantyTemplate } = synthApp('dev');
const { asl } = stateMachineOf(Template.fromStack(stacks.workflows['tool-loop']!));
const states: Record<string, any> = asl.States;
const selectFn = states['02-select-tool'].Resource;

describe('the iteration counter in the ASL', () => {
  it('starts at 0 in $.counters and is passed to every step', () => {
    expect(states.Start.Parameters.counters).toEqual({ iteration: 0 });
    for (const step of ['01-start-group', '02-select-tool', '03-execute', '04-reflect', '05-respond'])
      expect(states[step].Parameters['counters.$']).toBe('$.counters');
  });

  it('resets on entering 01-start-group and increments on entering 02-select-tool, after a Choice that goes to IterationLimit at 6', () => {
    expect(states.Start.Next).toBe('01-start-group.counters');
    expect(states['01-start-group.counters']).toEqual({
      Type: 'Pass',
      Comment: 'Entering 01-start-group: iteration reset to 0 ($.counters).',
      Parameters: { iteration: 0 },
      ResultPath: '$.counters',
      Next: '01-start-group',
    });
    const check = states['02-select-tool.iteration'];
    expect(check).toEqual({
      Type: 'Choice',
      Comment:
        'Counter iteration before 02-select-tool: at its cap of 6 → IterationLimit; otherwise on to 02-select-tool.',
      Choices: [{ Variable: '$.counters.iteration', NumericGreaterThanEquals: 6, Next: 'IterationLimit' }],
      Default: '02-select-tool.counters',
    });
    expect(states['02-select-tool.counters']).toMatchObject({
      Type: 'Pass',
      Parameters: { 'iteration.$': 'States.MathAdd($.counters.iteration, 1)' },
      ResultPath: '$.counters',
    });
    // Counter `then`: the outcome hands the partial work to 05-respond, which answers with it.
    expect(states.IterationLimit).toMatchObject({
      Type: 'Pass',
      Result: { Error: 'IterationLimit', Cause: 'counter iteration reached its cap of 6' },
      ResultPath: '$.error',
      Next: '05-respond',
    });
  });

  it('routes every edge into 02-select-tool through the check, and keeps the step-count breaker above 6 iterations', () => {
    for (const from of ['01-start-group', '04-reflect']) {
      const choice = states[routeStateName(from)].Choices.find((c: any) => c.StringEquals === '02-select-tool');
      expect(choice.Next).toBe('02-select-tool.iteration');
    }
    // 1 + 6 x 3 steps run before the 7th selection is refused: the breaker must not fire first.
    expect(loadWorkflow('tool-loop').manifest.maxSteps).toBeGreaterThan(1 + 6 * 3);
  });
});

describe('consensus in the ASL', () => {
  it("samples in inline Map waves of 4 and 3 (MaxConcurrency 4), each sample invoking the step's own Lambda with its item", () => {
    expect(states['02-select-tool.counters'].Next).toBe('02-select-tool.consensus');
    expect(states['02-select-tool.consensus']).toMatchObject({
      Type: 'Pass',
      ResultPath: '$.result.consensus',
      Next: '02-select-tool.wave-1',
    });
    expect(states['02-select-tool.consensus'].Result.waves.w1).toEqual(
      [0, 0.1, 0.2, 0.3].map((temperature, i) => ({ sample: i + 1, temperature })),
    );
    for (const [wave, size] of [
      [1, 4],
      [2, 3],
    ] as const) {
      const map = states[`02-select-tool.wave-${wave}`];
      expect(map).toMatchObject({
        Type: 'Map',
        ItemsPath: `$.result.consensus.waves.w${wave}`,
        MaxConcurrency: 4,
        ResultPath: `$.result.consensus.votes.w${wave}`,
      });
      expect(map.ItemProcessor.ProcessorConfig).toEqual({ Mode: 'INLINE' });
      expect(map.ItemSelector['sample.$']).toBe('$$.Map.Item.Value');
      const sample = map.ItemProcessor.States[`02-select-tool.wave-${wave}.sample`];
      expect(sample).toMatchObject({
        Type: 'Task',
        Resource: selectFn,
        Parameters: { step: '02-select-tool', 'sample.$': '$.sample' },
      });
      // Model throttling and timeouts are retried with backoff and jitter per sample, like any step.
      expect(sample.Retry[0]).toMatchObject({
        ErrorEquals: [...TRANSIENT_ERRORS],
        BackoffRate: 2,
        JitterStrategy: 'FULL',
      });
      // A failed sample is a discarded vote, not a failed step.
      expect(sample.Catch[0]).toMatchObject({
        ErrorEquals: ['States.ALL'],
        Next: `02-select-tool.wave-${wave}.failed`,
      });
      expect(map.Catch[0]).toMatchObject({ Next: '05-respond' });
      expect(states['02-select-tool.consensus'].Result.waves[`w${wave}`]).toHaveLength(size);
    }
  });

  it('tallies after the first wave and goes straight to the vote when decided', () => {
    expect(states['02-select-tool.wave-1'].Next).toBe('02-select-tool.wave-1.tally');
    expect(states['02-select-tool.wave-1.tally']).toMatchObject({
      Resource: selectFn,
      Parameters: { consensus: { 'votes.$': '$.result.consensus.votes', final: false } },
    });
    expect(states['02-select-tool.wave-1.decided']).toEqual({
      Type: 'Choice',
      Comment: expect.stringMatching(/^Decided after wave 1/),
      Choices: [{ Variable: '$.result.consensus.tally.decided', BooleanEquals: true, Next: '02-select-tool' }],
      Default: '02-select-tool.wave-2',
    });
    expect(states['02-select-tool.wave-2'].Next).toBe('02-select-tool');
    expect(states['02-select-tool'].Parameters.consensus).toEqual({
      'votes.$': '$.result.consensus.votes',
      final: true,
    });
    expect(states['02-select-tool'].Next).toBe(routeStateName('02-select-tool'));
  });

  it('is valid ASL', () => {
    const checked = validateAsl(asl);
    expect(checked.errorsText('\n')).toBe('');
    expect(checked.isValid).toBe(true);
  });

  it('changes nothing for a workflow without counters or consensus', () => {
    const warranty = stateMachineOf(warrantyTemplate).asl;
    expect(warranty.States.Start.Parameters).not.toHaveProperty('counters');
    expect(Object.keys(warranty.States).filter((name) => /\.(counters|consensus|wave-\d)/.test(name))).toEqual([]);
    expect(warranty.States['01-extract-serial'].Parameters).not.toHaveProperty('counters.$');
  });
});

describe('counter definitions', () => {
  const def = loadWorkflow('tool-loop');
  const withCounter = (counter: Record<string, unknown>) => ({
    ...def,
    manifest: { ...def.manifest, counters: { iteration: { ...def.manifest.counters.iteration!, ...counter } } },
  });

  it('refuses an unknown step and an outcome that is a generated state', () => {
    expect(() => validateCounters(withCounter({ increment: ['02-select'] }))).toThrow(
      new DefinitionError(
        'statemachines/tool-loop/workflow.yaml',
        'counters.iteration.increment.0',
        'unknown step "02-select"',
      ),
    );
    expect(() => validateCounters(withCounter({ outcome: 'MaxStepsExceeded' }))).toThrow(
      /counters\.iteration\.outcome: "MaxStepsExceeded" is a state the compiler generates/,
    );
    expect(() => validateCounters(def)).not.toThrow();
  });

  it('draws the counter check, the outcome and the Map waves in the Mermaid graph', () => {
    const mermaid = workflowToMermaid(def);
    expect(mermaid).toContain('    state c_02_select_tool <<choice>>\n');
    expect(mermaid).toContain('    c_02_select_tool --> o_IterationLimit : iteration = 6\n');
    expect(mermaid).toContain(
      '    state "02-select-tool.wave-1 (Map: 4 samples, temperature 0-0.3)" as m_02_select_tool_1\n',
    );
    expect(mermaid).toContain('    m_02_select_tool_1 --> m_02_select_tool_2 : undecided\n');
    expect(mermaid).toContain('    s_04_reflect --> c_02_select_tool\n');
  });
});
