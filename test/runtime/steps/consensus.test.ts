/**
 * The consensus vote (src/runtime/steps/consensus.ts) as a pure function: majority, early exit when the
 * leader can be neither overtaken nor tied, the deterministic tie-break (coldest sample), invented
 * values discarded, failed samples discarded; the wave plan; and the definition checks.
 */
import { describe, expect, it } from 'vitest';
import { DefinitionError, InvalidModelOutputError } from '../../../src/core/errors.ts';
import {
  checkConsensusTools,
  consensusPlan,
  validateConsensus,
  waveSizes,
} from '../../../src/definitions/workflow/consensus.ts';
import { loadWorkflow, parseStepFile } from '../../../src/definitions/workflow/loader.ts';
import type { Consensus, StepDefinition } from '../../../src/definitions/workflow/schema.ts';
import type { StepInput } from '../../../src/runtime/contracts/step.ts';
import { consensusPhase, type SampleResult, tally } from '../../../src/runtime/steps/consensus.ts';
import { NO_USAGE, type StepResult } from '../../../src/runtime/steps/types.ts';

const TOOLS = ['add_numbers', 'change_case'];
const consensus: Consensus = {
  samples: 7,
  temperatures: [0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6],
  maxConcurrency: 4,
  vote: 'pickedTool',
  choices: TOOLS,
};
const TEMPS = consensus.temperatures;

/** Sample n (1-based) at its planned temperature choosing `tool` (null: routes to reflection without a tool). */
const sample = (n: number, tool: string | null, extra: Partial<SampleResult> = {}): SampleResult => ({
  sample: n,
  temperature: TEMPS[n - 1]!,
  next: tool === null ? '04-reflect' : '03-run',
  reason: `sample ${n}`,
  decidedBy: 'model',
  fields: tool === null ? {} : { pickedTool: tool, toolArgs: { n } },
  usage: { ...NO_USAGE, modelCalls: 1 },
  ...extra,
});

describe('the consensus vote', () => {
  it('plans a majority first, then the rest, with the temperatures in sample order', () => {
    expect(waveSizes(consensus)).toEqual([4, 3]);
    expect(consensusPlan(consensus)).toEqual([
      [0, 0.1, 0.2, 0.3].map((temperature, i) => ({ sample: i + 1, temperature })),
      [0.4, 0.5, 0.6].map((temperature, i) => ({ sample: i + 5, temperature })),
    ]);
    // Fewer temperatures than samples: they repeat from the start.
    expect(
      consensusPlan({ ...consensus, samples: 3, temperatures: [0, 0.5], waves: [1, 1, 1] })
        .flat()
        .map((s) => s.temperature),
    ).toEqual([0, 0.5, 0]);
  });

  it('is decided after a unanimous first wave: 4 of 7 cannot be overtaken or tied by the 3 samples left', () => {
    const first = [1, 2, 3, 4].map((n) => sample(n, 'change_case'));
    const t = tally(consensus, first, TOOLS);
    expect(t).toMatchObject({ decided: true, taken: 4, remaining: 3 });
    expect(t.ranking[0]).toMatchObject({ next: '03-run', value: 'change_case', count: 4 });
  });

  it('is not decided while the runner-up plus the samples left could still tie the leader', () => {
    const first = [
      sample(1, 'change_case'),
      sample(2, 'change_case'),
      sample(3, 'change_case'),
      sample(4, 'add_numbers'),
    ];
    expect(tally(consensus, first, TOOLS).decided).toBe(false);
    // After all 7 the majority wins.
    const all = [...first, sample(5, 'add_numbers'), sample(6, 'change_case'), sample(7, 'add_numbers')];
    const t = tally(consensus, all, TOOLS);
    expect(t).toMatchObject({ decided: true, remaining: 0 });
    expect(t.ranking.map((c) => [c.value, c.count])).toEqual([
      ['change_case', 4],
      ['add_numbers', 3],
    ]);
  });

  it('breaks a tie towards the value whose coldest sample is coldest, whatever the order the samples arrive in', () => {
    const samples = [
      sample(1, 'add_numbers'),
      sample(2, 'change_case'),
      sample(3, 'add_numbers'),
      sample(4, 'change_case'),
      sample(5, 'add_numbers'),
      sample(6, 'change_case'),
    ];
    const forward = tally({ ...consensus, samples: 6 }, samples, TOOLS);
    const backward = tally({ ...consensus, samples: 6 }, [...samples].reverse(), TOOLS);
    expect(forward.ranking[0]).toMatchObject({ value: 'add_numbers', count: 3 });
    expect(forward.ranking[0]!.coldest.sample).toBe(1);
    expect(backward.ranking).toEqual(forward.ranking);
  });

  it('discards an invented tool and a failed sample: they are never counted, and never win', () => {
    const samples = [
      sample(1, 'guess_number'),
      sample(2, 'guess_number'),
      sample(3, 'guess_number'),
      sample(4, 'add_numbers'),
      { sample: 5, temperature: 0.4, error: 'ModelTimeoutError' },
    ];
    const t = tally({ ...consensus, samples: 5 }, samples, TOOLS);
    expect(t.ranking).toHaveLength(1);
    expect(t.ranking[0]).toMatchObject({ value: 'add_numbers', count: 1 });
    expect(t.discarded).toEqual([
      {
        sample: 1,
        why: 'pickedTool "guess_number" is not one of add_numbers, change_case',
      },
      {
        sample: 2,
        why: 'pickedTool "guess_number" is not one of add_numbers, change_case',
      },
      {
        sample: 3,
        why: 'pickedTool "guess_number" is not one of add_numbers, change_case',
      },
      { sample: 5, why: 'the sample failed: ModelTimeoutError' },
    ]);
  });

  it('counts "no tool" (a route without the voted output) as a vote of its own', () => {
    const t = tally(
      consensus,
      [1, 2, 3, 4].map((n) => sample(n, null)),
      TOOLS,
    );
    expect(t.ranking[0]).toMatchObject({ next: '04-reflect', value: null, count: 4 });
    expect(t.decided).toBe(true);
  });
});

describe('the consensus phases of the step handler', () => {
  const def = loadWorkflow('consensus-pick');
  const step = def.steps.find((s) => s.name === '02-pick')!;
  const input = { workflow: 'consensus-pick', step: step.name } as StepInput;
  const never = async (): Promise<StepResult> => {
    throw new Error('no sample may run in a vote');
  };

  it("runs one sample at the Map item's temperature", async () => {
    const temperatures: number[] = [];
    const run = async (t: number): Promise<StepResult> => {
      temperatures.push(t);
      return {
        next: '03-run',
        reason: 'r',
        decidedBy: 'offline',
        fields: { pickedTool: 'add_numbers' },
        toolCalls: [],
        usage: { ...NO_USAGE, modelCalls: 1 },
      };
    };
    const phase = await consensusPhase(def, step, { ...input, sample: { sample: 6, temperature: 0.5 } }, run);
    expect(temperatures).toEqual([0.5]);
    expect(phase).toEqual({
      reply: {
        sample: 6,
        temperature: 0.5,
        next: '03-run',
        reason: 'r',
        decidedBy: 'offline',
        fields: { pickedTool: 'add_numbers' },
        usage: { ...NO_USAGE, modelCalls: 1 },
      },
    });
  });

  it("records the vote as the step result: the winner's coldest sample's fields, every sample's model calls", async () => {
    const votes = {
      w1: [sample(1, 'add_numbers'), sample(2, 'change_case'), sample(3, 'change_case'), sample(4, 'change_case')],
      w2: [sample(5, 'add_numbers'), sample(6, 'guess_number'), sample(7, 'change_case')],
    };
    const phase = await consensusPhase(def, step, { ...input, consensus: { votes, final: true } }, never);
    expect(phase && 'result' in phase && phase.result).toMatchObject({
      next: '03-run',
      fields: { pickedTool: 'change_case', toolArgs: { n: 2 } },
      reason: 'sample 2 (consensus: 03-run with pickedTool "change_case" by 4 of 7 samples)',
      toolCalls: [],
      usage: { modelCalls: 7 },
    });
    expect(phase && 'summary' in phase && phase.summary).toMatchObject({
      samples: 7,
      earlyExit: false,
      discarded: [{ sample: 6 }],
    });
  });

  it('answers a tally between waves with whether the vote is decided, and fails the step when every sample was discarded', async () => {
    const tallied = await consensusPhase(
      def,
      step,
      { ...input, consensus: { votes: { w1: [1, 2, 3, 4].map((n) => sample(n, 'change_case')) }, final: false } },
      never,
    );
    expect(tallied).toMatchObject({ reply: { decided: true, samples: 4, earlyExit: true } });
    const invented = { w1: [1, 2, 3, 4].map((n) => sample(n, 'rm_rf')) };
    await expect(
      consensusPhase(def, step, { ...input, consensus: { votes: invented, final: true } }, never),
    ).rejects.toThrow(InvalidModelOutputError);
  });

  it('fails a step whose every sample failed with each error class and message, not a bare count', async () => {
    // As the Map's Catch keeps them: the error class, and the Lambda's error JSON as the cause.
    const caught = (errorType: string, errorMessage: string) => ({
      Error: errorType,
      Cause: JSON.stringify({ errorType, errorMessage, trace: [] }),
    });
    const key = caught('ModelRequestError', 'openai failed: HTTP 401: invalid_api_key: Incorrect API key provided');
    const votes = {
      w1: [1, 2, 3, 4].map((n) => ({ sample: n, temperature: TEMPS[n - 1]!, error: key })),
      w2: [
        { sample: 5, temperature: 0.4, error: caught('ModelThrottledError', 'openai failed: HTTP 429: slow down') },
        { sample: 6, temperature: 0.5, error: caught('ModelTimeoutError', 'openai failed: HTTP 500: <html>') },
        { sample: 7, temperature: 0.6, error: 'States.Timeout' },
      ],
    };
    await expect(consensusPhase(def, step, { ...input, consensus: { votes, final: true } }, never)).rejects.toThrow(
      '02-pick: no valid sample among 7 (samples 1, 2, 3, 4: the sample failed: ModelRequestError: openai failed: HTTP 401: invalid_api_key: Incorrect API key provided; ' +
        'sample 5: the sample failed: ModelThrottledError: openai failed: HTTP 429: slow down; ' +
        'sample 6: the sample failed: ModelTimeoutError: openai failed: HTTP 500: <html>; ' +
        'sample 7: the sample failed: States.Timeout)',
    );
  });

  it('leaves a step without consensus, or an invocation without a phase, to the runner', async () => {
    expect(await consensusPhase(def, step, input, never)).toBeUndefined();
    const plain = def.steps.find((s) => s.name === '04-reflect')!;
    expect(
      await consensusPhase(def, plain, { ...input, sample: { sample: 1, temperature: 0 } }, never),
    ).toBeUndefined();
  });
});

describe('consensus definitions', () => {
  const stepFile = (frontmatter: string): StepDefinition =>
    parseStepFile(
      'statemachines/x/steps/01-pick.md',
      `---\nname: 01-pick\ndescription: d\nversion: 1.0.0\n${frontmatter}\n---\nPick.\n`,
    );

  it('refuses consensus on a code step, an undeclared voted output, choices without vote, and waves that do not add up', () => {
    const cases: [string, RegExp][] = [
      ['kind: code\nhandler: pick\nnext: [DONE]\nconsensus: { samples: 3 }', /consensus: only LLM steps are sampled/],
      [
        'kind: llm\nnext: [DONE]\nconsensus: { samples: 3, vote: tool }',
        /consensus\.vote: "tool" is not a declared output/,
      ],
      [
        'kind: llm\nnext: [DONE]\nconsensus: { samples: 3, choices: [a] }',
        /consensus\.choices: choices constrain the voted output/,
      ],
      [
        'kind: llm\nnext: [DONE]\nconsensus: { samples: 5, waves: [2, 2] }',
        /consensus\.waves: the waves take 4 samples, not samples: 5/,
      ],
    ];
    for (const [fm, message] of cases) {
      const check = () => validateConsensus(stepFile(fm));
      expect(check).toThrow(DefinitionError);
      expect(check).toThrow(message);
    }
    expect(() =>
      validateConsensus(
        stepFile(
          'kind: llm\nnext: [DONE]\noutputs: { tool: { type: string, description: t } }\nconsensus: { samples: 5, vote: tool, choices: tools }',
        ),
      ),
    ).not.toThrow();
  });

  it('refuses a side-effecting tool on a sampled step (it would run once per sample), not a read-only one', () => {
    const sampled = stepFile('kind: llm\nnext: [DONE]\ntools: [lookup, create_ticket]\nconsensus: { samples: 3 }');
    const sideEffects = (tool: string) => tool === 'create_ticket';
    expect(() => checkConsensusTools(sampled, sideEffects)).toThrow(
      /tools\.1: "create_ticket" has side effects: a consensus step runs once per sample/,
    );
    expect(() => checkConsensusTools({ ...sampled, tools: ['lookup'] }, sideEffects)).not.toThrow();
    expect(() => checkConsensusTools({ ...sampled, consensus: undefined }, sideEffects)).not.toThrow();
  });
});
