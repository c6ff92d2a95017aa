/**
 * A model endpoint that accepts the connection and never answers costs a step its own timeout, not
 * the provider's 60 s per call times every sample and attempt. The OpenAI-compatible provider calls
 * a local server on 127.0.0.1 that never answers; the step handler runs as the state machine
 * invokes it: every attempt of a plain step one after another, and the samples of a consensus step
 * wave by wave, each invocation with a Lambda context counting down from the step's timeout.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from '@aws-lambda-powertools/logger';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consensusPlan } from '../../src/definitions/workflow/consensus.ts';
import { loadWorkflow } from '../../src/definitions/workflow/loader.ts';
import { memoryEventLog } from '../../src/runtime/event-log.ts';
import { createHandler } from '../../src/runtime/step-handler/handler.ts';
import type { SampleResult } from '../../src/runtime/steps/consensus.ts';
import { captureLogger, inboundEmail, previousState, stepInput } from '../runtime/steps/fixtures.ts';
import { recordFigure } from './figures.ts';

/** The step timeout of this test's functions (a deployed LLM step has 2 minutes). */
const STEP_TIMEOUT_MS = 2_000;

/** A server that reads each request and never answers it. */
class HungServer {
  readonly requests: IncomingMessage[] = [];
  private server?: Server;

  async start(): Promise<string> {
    this.server = createServer((req) => {
      this.requests.push(req);
      req.resume();
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1`;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }
}

/** A Lambda context whose remaining time counts down from the step timeout, as each invocation starts. */
const lambdaContext = () => {
  const deadline = Date.now() + STEP_TIMEOUT_MS;
  return { getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()) };
};

/** What an invocation ended in: its output, or its error as the ASL would see it. */
const outcome = (run: Promise<unknown>) =>
  run.then(
    (output) => ({ output, error: undefined }),
    (e: Error) => ({ output: undefined, error: { Error: e.name, Cause: JSON.stringify({ errorMessage: e.message }) } }),
  );

const server = new HungServer();
let baseUrl = '';
let consensusSeconds = 0;
beforeAll(async () => {
  baseUrl = await server.start();
});
afterAll(async () => {
  await server.stop();
  recordFigure('hung model endpoint', `outcome in ${consensusSeconds.toFixed(1)} s`);
});

function handlerFor(workflow: string, step: string) {
  return createHandler(
    {
      WORKFLOW: workflow,
      STEP: step,
      MODEL_PROVIDER: 'openai',
      OPENAI_BASE_URL: baseUrl,
      OPENAI_MODEL: 'hung-model',
      FAST_PATHS: 'off',
    },
    {
      events: memoryEventLog(),
      emails: { get: async () => ({ email: inboundEmail(), body: 'My SN12345 broke.' }) },
      logger: captureLogger().logger as unknown as Logger,
    },
  );
}

describe('a model endpoint that never answers', () => {
  it('fails every attempt of a plain step as a retryable ModelTimeoutError within the step timeout in all', async () => {
    const handler = handlerFor('warranty-email', '01-extract-serial');
    const attempts = 1 + loadWorkflow('warranty-email').manifest.retry.maxAttempts;
    const input = stepInput('01-extract-serial', { workflow: 'warranty-email' });
    const errors: unknown[] = [];
    for (let i = 0; i < attempts; i++) errors.push((await outcome(handler(input, lambdaContext() as never))).error);
    expect(server.requests.length).toBeGreaterThan(0);
    for (const error of errors)
      expect(error).toMatchObject({
        Error: 'ModelTimeoutError',
        Cause: expect.stringMatching(/step's deadline \(\d+ ms, from the step's timeout\)/),
      });
  });

  it("ends a consensus step of 7 samples in 2 waves, 4 attempts each, within one step timeout, naming each sample's error", async () => {
    const def = loadWorkflow('tool-loop');
    const step = def.steps.find((s) => s.name === '02-select-tool')!;
    const handler = handlerFor('tool-loop', step.name);
    const attempts = 1 + def.manifest.retry.maxAttempts;
    const base = {
      workflow: 'tool-loop',
      step: step.name,
      input: { sessionId: 'demo', turnId: 't1', query: 'Convert 10 km to mi' },
      previous: previousState({ next: step.name, data: { remainingQuery: 'Convert 10 km to mi' } }),
      error: null,
      count: 1,
      execution: { id: 'arn:aws:states:us-east-1:123456789012:execution:tool-loop:exec-1', name: 'exec-1' },
      counters: { iteration: 1 },
    };
    const started = Date.now();
    const votes: Record<string, SampleResult[]> = {};
    for (const [i, wave] of consensusPlan(step.consensus!).entries()) {
      // The Map runs a wave's samples at once (maxConcurrency 4); each sample is retried like any step.
      votes[`w${i + 1}`] = await Promise.all(
        wave.map(async (sample) => {
          let last: { error?: unknown } = {};
          for (let attempt = 0; attempt < attempts; attempt++)
            last = await outcome(handler({ ...base, sample }, lambdaContext() as never));
          return { ...sample, error: last.error };
        }),
      );
    }
    const vote = await outcome(handler({ ...base, consensus: { votes, final: true } }, lambdaContext() as never));
    consensusSeconds = (Date.now() - started) / 1000;
    expect(vote.error).toMatchObject({ Error: 'InvalidModelOutputError' });
    const message = JSON.parse(vote.error!.Cause).errorMessage as string;
    expect(message).toMatch(/^02-select-tool: no valid sample among 7 \(samples? \d/);
    // Every sample is named with its error class and message.
    for (let n = 1; n <= 7; n++)
      expect(message).toMatch(new RegExp(`samples? [\\d, ]*\\b${n}\\b[\\d, ]*: the sample failed`));
    expect(
      message.match(/the sample failed: ModelTimeoutError: 02-select-tool: no model answer within the step's deadline/g)
        ?.length,
    ).toBeGreaterThan(0);
    expect(message).not.toMatch(/failed: (?!ModelTimeoutError)/);
  });
});
