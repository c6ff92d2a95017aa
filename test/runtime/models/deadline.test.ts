/**
 * The model budget of a step invocation: taken from the step's own timeout and shared by every
 * attempt and consensus wave, one deadline per call, and a throttled call's Retry-After waited out
 * only when it fits in what is left.
 */
import { describe, expect, it } from 'vitest';
import { ModelThrottledError } from '../../../src/core/errors.ts';
import type { ConverseRequest, ConverseResponse, ModelProvider } from '../../../src/runtime/contracts/model-port.ts';
import { type DeadlineClock, invocationBudgetMs, ModelDeadline } from '../../../src/runtime/models/deadline.ts';
import { OpenAiThrottledError } from '../../../src/runtime/models/openai.ts';

const REQUEST: ConverseRequest = { system: [{ text: 'x' }], messages: [{ role: 'user', content: [{ text: 'hi' }] }] };
const ANSWER: ConverseResponse = {
  output: { message: { role: 'assistant', content: [{ text: 'ok' }] } },
  stopReason: 'end_turn',
  usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 },
};

/** A clock whose waits move time at once (no real sleeping) and are recorded. */
function steppedClock(): DeadlineClock & { waits: number[] } {
  let now = 0;
  const waits: number[] = [];
  return {
    waits,
    now: () => now,
    sleep: async (ms) => {
      waits.push(ms);
      now += ms;
    },
  };
}

/** A model that throws each of `failures` in turn, then answers. */
function failingThen(failures: Error[]): ModelProvider & { calls: number } {
  const model = {
    name: 'openai' as const,
    calls: 0,
    async converse() {
      const failure = failures[model.calls++];
      if (failure) throw failure;
      return ANSWER;
    },
  };
  return model;
}

describe('the model budget of one step invocation', () => {
  it('shares the step timeout among every attempt and every consensus wave', () => {
    // The default LLM step: 2 minutes, 1 + 3 retries; a consensus sample of 2 waves gets half of that again.
    expect(invocationBudgetMs({ timeoutMs: 120_000, attempts: 4, rounds: 1 })).toBe(30_000);
    expect(invocationBudgetMs({ timeoutMs: 120_000, attempts: 4, rounds: 2 })).toBe(15_000);
    // Without retries it is the whole timeout less the reserve for recording the step.
    expect(invocationBudgetMs({ timeoutMs: 120_000, attempts: 1, rounds: 1 })).toBe(115_000);
    expect(invocationBudgetMs({ timeoutMs: 2_000, attempts: 1, rounds: 1 })).toBe(1_600);
  });

  it('cuts a call that never answers at the deadline, as a retryable ModelTimeoutError', async () => {
    let signal: AbortSignal | undefined;
    const hung: ModelProvider = {
      name: 'openai',
      converse: (_request, options) =>
        new Promise((_, reject) => {
          signal = options?.signal;
          signal?.addEventListener('abort', () => reject(new Error('aborted')));
        }),
    };
    await expect(new ModelDeadline(15).converse(hung, REQUEST, '01-x')).rejects.toMatchObject({
      name: 'ModelTimeoutError',
      message: expect.stringContaining("01-x: no model answer within the step's deadline (15 ms"),
    });
    expect(signal?.aborted).toBe(true);
  });

  it('waits out a Retry-After that fits in the budget and sends the call again', async () => {
    const clock = steppedClock();
    const model = failingThen([new OpenAiThrottledError('HTTP 429', 2), new OpenAiThrottledError('HTTP 429', 3)]);
    const answer = await new ModelDeadline(10_000, clock).converse(model, REQUEST, '01-x');
    expect(answer).toBe(ANSWER);
    expect(clock.waits).toEqual([2_000, 3_000]);
    expect(model.calls).toBe(3);
  });

  it('leaves a Retry-After past the budget, and a throttle that names no wait, to the state machine', async () => {
    const clock = steppedClock();
    const late = failingThen([new OpenAiThrottledError('HTTP 429', 30)]);
    await expect(new ModelDeadline(10_000, clock).converse(late, REQUEST, '01-x')).rejects.toMatchObject({
      name: 'ModelThrottledError',
    });
    const unsaid = failingThen([new ModelThrottledError('ThrottlingException')]);
    await expect(new ModelDeadline(10_000, clock).converse(unsaid, REQUEST, '01-x')).rejects.toMatchObject({
      name: 'ModelThrottledError',
    });
    expect(clock.waits).toEqual([]);
    expect(late.calls + unsaid.calls).toBe(2);
  });

  it('sends nothing once the budget is used up', async () => {
    const clock = steppedClock();
    const model = failingThen([new OpenAiThrottledError('HTTP 429', 4), new OpenAiThrottledError('HTTP 429', 4)]);
    // 4 s fit in the 5 s budget once; after that 1 s is left and the second wait does not fit.
    await expect(new ModelDeadline(5_000, clock).converse(model, REQUEST, '01-x')).rejects.toMatchObject({
      name: 'ModelThrottledError',
    });
    expect(clock.waits).toEqual([4_000]);
    await expect(new ModelDeadline(0, clock).converse(model, REQUEST, '01-x')).rejects.toMatchObject({
      name: 'ModelTimeoutError',
      message: expect.stringContaining('budget of 0 ms is used up'),
    });
    expect(model.calls).toBe(2);
  });
});
