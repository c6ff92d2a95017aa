/**
 * Issue 2 acceptance: the REAL synthesized ASL of an AgentWorkflow (App + Stack + construct over the
 * `triage` fixture workflow) runs in the local runtime, with scripted step handlers standing in for
 * the step Lambdas. Every declared route is taken, undeclared routes go to the fallback, loops trip
 * the circuit breaker, transient errors are retried, permanent ones are caught, data flows from the
 * first step to the last, the history lists the steps in order, and execution names are unique.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ExecutionAlreadyExists } from '@aws-sdk/client-sfn';
import { Stack } from 'aws-cdk-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentWorkflow } from '../../../src/cdk/constructs/agent-workflow.ts';
import * as errors from '../../../src/core/errors.ts';
import { loadWorkflow } from '../../../src/definitions/workflow/loader.ts';
import { DONE } from '../../../src/definitions/workflow/schema.ts';
import { type LocalExecution, LocalRuntime, type TaskHandler } from '../../../src/local/asl/runtime.ts';
import { synthesize, synthProject } from '../../../src/local/cloud/synth.ts';
import { readLocalExecution, stateTransitions, stepTrail } from '../../../src/local/records/history.ts';
import type { StepInput, StepOutput } from '../../../src/runtime/contracts/step.ts';
import { triagePlugin } from '../../fixtures/triage-plugin.ts';
import { fixtureEnv } from '../../support/fixture-project.ts';

// asl-validator ships no type declarations.
const aslValidator = createRequire(import.meta.url)('asl-validator') as (
  definition: unknown,
  options?: { checkArn?: boolean; checkPaths?: boolean },
) => { isValid: boolean; errorsText: (separator?: string) => string };

const plugin = triagePlugin();
const triage = plugin.def;
const { maxSteps, fallback } = triage.manifest;

/** What an execution's scripted steps do; it travels in the execution input. */
interface Script {
  /** Per step, the route of its 1st, 2nd, ... visit (the last one repeats). */
  routes: Record<string, string[]>;
  /** Per step, an error (a class of src/core/errors.ts) thrown on its first `times` attempts. */
  failures?: Record<string, { error: keyof typeof errors; times: number }>;
}

/** Attempts per `<execution>/<step>`, so a scripted failure can clear after some retries. */
const attempts = new Map<string, number>();

/** A stand-in for a step Lambda: follows the script, returns a StepOutput, and keeps a trail in `data`. */
function scripted(step: string): TaskHandler {
  return (event: StepInput): StepOutput => {
    const script = event.input as unknown as Script;
    const key = `${event.execution.name}/${step}`;
    const attempt = (attempts.get(key) ?? 0) + 1;
    attempts.set(key, attempt);
    const failure = script.failures?.[step];
    if (failure && attempt <= failure.times) {
      const ErrorClass = errors[failure.error] as new (message: string) => Error;
      throw new ErrorClass(`${step} scripted failure ${attempt}`);
    }
    const trail = [...((event.previous.data.trail as string[] | undefined) ?? []), step];
    const visit = trail.filter((s) => s === step).length;
    const routes = script.routes[step] ?? [DONE];
    return {
      step,
      next: routes[Math.min(visit, routes.length) - 1]!,
      reason: `${step} visit ${visit}`,
      decidedBy: 'code',
      fields: {
        ...(step === 'd-answer' && { answeredRecord: event.previous.data.recordId }),
        ...(step === fallback && { caught: event.error, routedHereBy: event.previous.next }),
      },
      data: { ...event.previous.data, trail, ...(step === 'a-intake' && { recordId: 'R-42' }) },
      count: event.count,
      toolCalls: [],
      usage: { modelCalls: 0, inputTokens: 0, outputTokens: 0, cacheReadInputTokens: 0, cacheWriteInputTokens: 0 },
      durationMs: 0,
    };
  };
}

let historyDir: string;
let runtime: LocalRuntime;
const executions: LocalExecution[] = [];

async function run(name: string, script: Script): Promise<LocalExecution> {
  const execution = await runtime.startExecution('triage', script, { name });
  executions.push(execution);
  return execution;
}

const names = (execution: LocalExecution) => stepTrail(execution.history).map((s) => s.name);
const resultOf = (execution: LocalExecution) => (execution.output as { result: StepOutput }).result;

beforeAll(async () => {
  historyDir = mkdtempSync(join(tmpdir(), 'stepwise-exec-'));
  const synthesized = synthesize((app) => {
    const stack = new Stack(app, 'TriageTest');
    new AgentWorkflow(stack, 'Triage', { plugin, config: fixtureEnv('dev') });
  });
  runtime = await LocalRuntime.create({
    app: synthesized,
    historyDir,
    retryDelayMs: 0,
    handlerOverrides: Object.fromEntries(triage.steps.map((s) => [s.name, scripted(s.name)])),
  });
});

afterAll(() => {
  rmSync(historyDir, { recursive: true, force: true });
  // Transitions per step, for the record (Standard workflows are billed per state transition).
  const rows = executions.map((e) => {
    const steps = stepTrail(e.history).length;
    const transitions = stateTransitions(e.history);
    return { execution: e.name, status: e.status, steps, transitions, perStep: +(transitions / steps).toFixed(2) };
  });
  console.info('state transitions per execution:');
  console.table(rows);
});

describe('the synthesized ASL of the triage fixture, run locally', () => {
  it('is the compiled contract: Start, one Task per step invoking that step’s own function, a route Choice per step', () => {
    const sm = runtime.stateMachine('triage');
    expect(sm.type).toBe('STANDARD');
    expect(sm.definition.StartAt).toBe('Start');
    for (const step of triage.steps) {
      const task = sm.definition.States[step.name] as { Type: string; Resource: string; Next: string };
      expect(task.Type).toBe('Task');
      expect(task.Resource).toMatch(/^arn:aws:lambda:us-east-1:123456789012:function:/);
      expect(task.Next).toBe(`${step.name}.route`);
    }
  });

  it('takes every declared route at least once', async () => {
    const happy = await run('route-answer', { routes: { 'a-intake': ['b-lookup'], 'b-lookup': ['d-answer'] } });
    const clarify = await run('route-clarify', {
      routes: { 'a-intake': ['c-clarify'], 'c-clarify': ['c-clarify', 'b-lookup', DONE], 'b-lookup': ['c-clarify'] },
    });
    const handOff = await run('route-fallback', { routes: { 'a-intake': [fallback] } });
    expect(names(happy)).toEqual(['a-intake', 'b-lookup', 'd-answer']);
    expect(names(clarify)).toEqual(['a-intake', 'c-clarify', 'c-clarify', 'b-lookup', 'c-clarify']);
    expect(names(handOff)).toEqual(['a-intake', fallback]);

    const taken = new Set(
      [happy, clarify, handOff].flatMap((e) => {
        expect(e.status).toBe('SUCCEEDED');
        return stepTrail(e.history).map((s) => `${s.name} -> ${s.next}`);
      }),
    );
    const declared = new Set(triage.steps.flatMap((s) => s.next.map((n) => `${s.name} -> ${n}`)));
    expect(declared.size).toBe(10);
    expect(taken).toEqual(declared);
  });

  it('passes data from the first step to the last through previous.data', async () => {
    const happy = executions.find((e) => e.name === 'route-answer')!;
    const last = stepTrail(happy.history).at(-1)!;
    expect((last.input as StepInput).previous.data.recordId).toBe('R-42');
    expect(resultOf(happy).fields).toEqual({ answeredRecord: 'R-42' });
    expect(resultOf(happy).data).toMatchObject({ recordId: 'R-42', trail: ['a-intake', 'b-lookup', 'd-answer'] });
    // The ResultSelector keeps exactly the StepState keys in the state.
    expect(Object.keys(resultOf(happy)).sort()).toEqual([
      'count',
      'data',
      'decidedBy',
      'fields',
      'next',
      'reason',
      'step',
    ]);
    expect(resultOf(happy).count).toBe(3);
  });

  it('sends an undeclared route to the fallback (an existing step that is not an edge, or no step at all)', async () => {
    for (const [name, next] of [
      ['undeclared-edge', 'd-answer'],
      ['unknown-step', 'nowhere'],
    ] as const) {
      const execution = await run(name, { routes: { 'a-intake': [next] } });
      expect(execution.status).toBe('SUCCEEDED');
      expect(names(execution)).toEqual(['a-intake', fallback]);
      expect(resultOf(execution).fields).toMatchObject({ routedHereBy: next, caught: null });
    }
  });

  it('trips the circuit breaker at maxSteps when a loop keeps going: the fallback still answers, with the reason in $.error', async () => {
    const loop = await run('loop-forever', { routes: { 'a-intake': ['c-clarify'], 'c-clarify': ['c-clarify'] } });
    expect(loop.status).toBe('SUCCEEDED');
    expect(names(loop)).toHaveLength(maxSteps + 1);
    expect(names(loop).at(-1)).toBe(fallback);
    expect(resultOf(loop).fields).toMatchObject({
      caught: { Error: 'MaxStepsExceeded', Cause: expect.stringContaining(`${maxSteps} steps`) },
    });
    expect(
      loop.history.some((e) => e.type === 'PassStateEntered' && e.stateEnteredEventDetails?.name === 'MaxStepsHandoff'),
    ).toBe(true);

    const doneAtLimit = await run('loop-then-done', {
      routes: { 'a-intake': ['c-clarify'], 'c-clarify': ['c-clarify', 'c-clarify', 'c-clarify', 'c-clarify', DONE] },
    });
    expect(doneAtLimit.status).toBe('SUCCEEDED');
    expect(names(doneAtLimit)).toHaveLength(maxSteps);
  });

  it('ends in MaxStepsExceeded only when the fallback itself routes on past the limit', async () => {
    const loop = await run('fallback-loops', {
      routes: { 'a-intake': ['c-clarify'], 'c-clarify': ['c-clarify'], [fallback]: ['c-clarify'] },
    });
    expect(loop.status).toBe('FAILED');
    expect(loop.error).toEqual({ Error: 'MaxStepsExceeded' });
    expect(loop.history.at(-2)).toMatchObject({
      type: 'FailStateEntered',
      stateEnteredEventDetails: { name: 'MaxStepsExceeded' },
    });
  });

  it('retries a transient error (ModelThrottledError) and then succeeds', async () => {
    const execution = await run('throttled-once', {
      routes: { 'a-intake': ['b-lookup'], 'b-lookup': ['d-answer'] },
      failures: { 'a-intake': { error: 'ModelThrottledError', times: 1 } },
    });
    expect(execution.status).toBe('SUCCEEDED');
    const [first] = stepTrail(execution.history);
    expect(first).toMatchObject({ name: 'a-intake', retries: 1, next: 'b-lookup' });
    expect(first!.error).toBeUndefined();
    const failed = execution.history.find((e) => e.type === 'LambdaFunctionFailed')!;
    expect(failed.lambdaFunctionFailedEventDetails?.error).toBe('ModelThrottledError');
    expect(names(execution)).toEqual(['a-intake', 'b-lookup', 'd-answer']);
  });

  it('gives up on a transient error after the manifest’s maxAttempts retries and catches it to the fallback', async () => {
    const execution = await run('throttled-always', {
      routes: { 'a-intake': ['b-lookup'] },
      failures: { 'b-lookup': { error: 'ModelThrottledError', times: 100 } },
    });
    expect(execution.status).toBe('SUCCEEDED');
    expect(stepTrail(execution.history)[1]).toMatchObject({
      name: 'b-lookup',
      retries: triage.manifest.retry.maxAttempts,
    });
    expect(names(execution)).toEqual(['a-intake', 'b-lookup', fallback]);
  });

  it('catches a permanent error to the fallback without retrying, with the error in $.error', async () => {
    const execution = await run('permanent-error', {
      routes: { 'a-intake': ['b-lookup'] },
      failures: { 'b-lookup': { error: 'ToolInputError', times: 100 } },
    });
    expect(execution.status).toBe('SUCCEEDED');
    const [, lookup, handOff] = stepTrail(execution.history);
    expect(lookup).toMatchObject({ name: 'b-lookup', retries: 0, error: { error: 'ToolInputError' } });
    const caught = (handOff!.input as StepInput).error!;
    expect(caught.Error).toBe('ToolInputError');
    expect(JSON.parse(caught.Cause)).toMatchObject({
      errorType: 'ToolInputError',
      errorMessage: 'b-lookup scripted failure 1',
    });
    expect(resultOf(execution).fields).toMatchObject({ caught: { Error: 'ToolInputError' } });
  });

  it('ends in FallbackFailed when the fallback fails, and RouteRejected when the fallback routes outside its edges', async () => {
    const failed = await run('fallback-fails', {
      routes: { 'a-intake': ['nowhere'] },
      failures: { [fallback]: { error: 'StepFailedError', times: 100 } },
    });
    expect(failed).toMatchObject({ status: 'FAILED', error: { Error: 'FallbackFailed' } });
    const rejected = await run('fallback-misroutes', { routes: { 'a-intake': ['nowhere'], [fallback]: ['a-intake'] } });
    expect(rejected).toMatchObject({ status: 'FAILED', error: { Error: 'RouteRejected' } });
  });

  it('stores the history: the steps in order, readable by name and by ARN', async () => {
    const execution = executions.find((e) => e.name === 'route-clarify')!;
    const stored = readLocalExecution(execution.name, historyDir);
    expect(stored.workflow).toBe('triage');
    expect(stepTrail(stored.events).map((s) => s.name)).toEqual([
      'a-intake',
      'c-clarify',
      'c-clarify',
      'b-lookup',
      'c-clarify',
    ]);
    expect(readLocalExecution(execution.executionArn, historyDir).events).toEqual(stored.events);
    const entered = stored.events
      .filter((e) => e.type?.endsWith('StateEntered'))
      .map((e) => e.stateEnteredEventDetails!.name);
    expect(entered).toEqual([
      'Start',
      'a-intake',
      'a-intake.route',
      'c-clarify',
      'c-clarify.route',
      'c-clarify',
      'c-clarify.route',
      'b-lookup',
      'b-lookup.route',
      'c-clarify',
      'c-clarify.route',
      'Done',
    ]);
  });

  it('rejects a second execution with the same name and keeps the first one’s history', async () => {
    const first = await run('duplicate-delivery', { routes: { 'a-intake': [fallback] } });
    const file = join(historyDir, 'duplicate-delivery.json');
    const before = readFileSync(file, 'utf8');
    await expect(runtime.startExecution('triage', { routes: {} }, { name: 'duplicate-delivery' })).rejects.toThrow(
      ExecutionAlreadyExists,
    );
    expect(first.status).toBe('SUCCEEDED');
    expect(readFileSync(file, 'utf8')).toBe(before);
  });
});

describe('an email workflow as deployed (case-desk)', () => {
  it('synthesizes to ASL that asl-validator accepts (ARNs and paths checked)', async () => {
    const sm = (await synthProject('dev')).stateMachines.find((m) => m.workflowName === 'case-desk');
    expect(sm).toBeDefined();
    const { isValid, errorsText } = aslValidator(sm!.definition, { checkArn: true, checkPaths: true });
    expect(errorsText('\n')).toBe('');
    expect(isValid).toBe(true);
    const steps = loadWorkflow('case-desk').steps.map((s) => s.name);
    expect(Object.keys(sm!.definition.States)).toEqual(
      expect.arrayContaining([
        ...steps,
        ...steps.map((s) => `${s}.route`),
        'Start',
        'Done',
        'MaxStepsExceeded',
        'FallbackFailed',
        'RouteRejected',
      ]),
    );
  });
});
