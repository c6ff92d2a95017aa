/**
 * The local runtime on Map and Parallel states, unmappable Tasks and timeouts, over a CDK app built
 * here (functions running test/fixtures/handlers/recorder.ts): every Task at any depth runs its local
 * handler, falsy Map items work, a Task the runtime cannot map fails the execution (no Catch sees it,
 * nothing calls AWS), and Task and Lambda timeouts are the template's.
 */
import type { HistoryEvent } from '@aws-sdk/client-sfn';
import { Duration, Stack } from 'aws-cdk-lib';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import * as tasks from 'aws-cdk-lib/aws-stepfunctions-tasks';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { LocalRuntime } from '../../../src/local/asl/runtime.ts';
import { synthesize } from '../../../src/local/cloud/synth.ts';
import { stepTrail } from '../../../src/local/records/history.ts';
import { concurrency } from '../../fixtures/handlers/recorder.ts';
import { invokeByArn, invokeIntegration, machine, recorderFunction, recorderPayload } from './fixture-app.ts';

const app = synthesize((cdkApp) => {
  const stack = new Stack(cdkApp, 'Nested');
  const recorder = recorderFunction(stack, 'Recorder', 5);
  const slow = recorderFunction(stack, 'SlowFn', 1);

  const items = new sfn.Map(stack, 'Items', {
    itemsPath: '$.items',
    maxConcurrency: 2,
    itemSelector: { 'value.$': '$$.Map.Item.Value', 'index.$': '$$.Map.Item.Index' },
    resultPath: '$.results',
  }).itemProcessor(
    invokeByArn(stack, 'Record', recorder, {
      payload: recorderPayload({
        'value.$': '$.value',
        'index.$': '$.index',
        'tag.$': '$$.Execution.Input.tag',
        'started.$': '$$.Execution.StartTime',
        sleepMs: 20,
      }),
    }),
  );
  const raw = new sfn.Map(stack, 'Raw', { itemsPath: '$.raw', resultPath: '$.wrapped' }).itemProcessor(
    invokeByArn(stack, 'Wrap', recorder, { payload: recorderPayload({ 'value.$': '$' }) }),
  );
  machine(stack, 'map-machine', items.next(raw));
  // No payload: each item is the Task's input as it is.
  const risky = new sfn.Map(stack, 'Risky', { itemsPath: '$.items' }).itemProcessor(
    invokeByArn(stack, 'Attempt', recorder, { payload: undefined }),
  );
  machine(stack, 'failing-map', risky);

  const both = new sfn.Parallel(stack, 'Both')
    .branch(invokeIntegration(stack, 'Left', recorder, { payload: recorderPayload({ side: 'left' }) }))
    .branch(
      new sfn.Pass(stack, 'Prepare', { parameters: { side: 'right' } }).next(
        invokeByArn(stack, 'Right', recorder, { payload: recorderPayload({ 'side.$': '$.side' }) }),
      ),
    );
  machine(stack, 'parallel-machine', both);

  const elsewhere = lambda.Function.fromFunctionArn(
    stack,
    'Elsewhere',
    'arn:aws:lambda:us-east-1:123456789012:function:elsewhere',
  );
  const fan = new sfn.Map(stack, 'Fan', { itemsPath: '$.items' }).itemProcessor(
    invokeByArn(stack, 'CallElsewhere', elsewhere as never),
  );
  fan.addCatch(new sfn.Pass(stack, 'SwallowedMap'), { errors: [sfn.Errors.ALL] });
  machine(stack, 'unmapped-function', fan);

  const listBuckets = new tasks.CallAwsService(stack, 'ListBuckets', {
    service: 's3',
    action: 'listBuckets',
    iamResources: ['*'],
  });
  const branches = new sfn.Parallel(stack, 'Fork').branch(listBuckets);
  branches.addCatch(new sfn.Pass(stack, 'SwallowedParallel'), { errors: [sfn.Errors.ALL] });
  machine(stack, 'unmapped-service', branches);

  machine(
    stack,
    'distributed-map',
    new sfn.DistributedMap(stack, 'Distributed', { itemsPath: '$.items' }).itemProcessor(
      new sfn.Pass(stack, 'PerItem'),
    ),
  );

  const lambdaTimeout = invokeByArn(stack, 'Slow', slow, {
    payload: recorderPayload({ 'sleepMs.$': '$.sleepMs' }),
    resultPath: '$.result',
  });
  lambdaTimeout.addCatch(new sfn.Pass(stack, 'TimedOut'), { errors: ['Sandbox.Timedout'], resultPath: '$.error' });
  machine(stack, 'lambda-timeout', lambdaTimeout);
  machine(
    stack,
    'task-timeout',
    invokeByArn(stack, 'Bounded', recorder, {
      payload: recorderPayload({ 'sleepMs.$': '$.sleepMs' }),
      taskTimeout: sfn.Timeout.duration(Duration.seconds(1)),
    }),
  );
  machine(
    stack,
    'heartbeat-timeout',
    invokeIntegration(stack, 'Beating', recorder, {
      payload: recorderPayload({ 'sleepMs.$': '$.sleepMs' }),
      taskTimeout: sfn.Timeout.duration(Duration.seconds(10)),
      heartbeatTimeout: sfn.Timeout.duration(Duration.seconds(1)),
    }),
  );
});

let runtime: LocalRuntime;
beforeAll(async () => {
  runtime = await LocalRuntime.create({ app, historyDir: false });
});

const byId = (history: HistoryEvent[]) => new Map(history.map((e) => [e.id!, e]));
/** The Map iteration an event belongs to, following `previousEventId`. */
function iterationOf(event: HistoryEvent, events: Map<number, HistoryEvent>): number | undefined {
  for (let e: HistoryEvent | undefined = event; e; e = events.get(e.previousEventId!)) {
    if (e.type === 'MapIterationStarted') return e.mapIterationStartedEventDetails!.index;
  }
  return undefined;
}

describe('Map', () => {
  beforeEach(() => Object.assign(concurrency, { active: 0, max: 0 }));

  it('runs every iteration’s Task on its local handler, with ItemSelector, MaxConcurrency and falsy items', async () => {
    const items = ['a', 'b', 'c', 'd', 'e'];
    const raw = [0, false, '', null, 1];
    const run = await runtime.startExecution('map-machine', { items, raw, tag: 'mine' }, { name: 'map-1' });
    expect(run.status).toBe('SUCCEEDED');
    const output = run.output as {
      results: Array<{ echo: { value: string; index: number; started: string } }>;
      wrapped: Array<{ echo: { value: unknown } }>;
    };
    const started = output.results[0]!.echo.started;
    // $$.Execution.Input and StartTime inside an iteration are the execution's, as in Step Functions.
    expect(output.results.map((r) => r.echo)).toEqual(
      items.map((value, index) => ({ execution: 'map-1', value, index, tag: 'mine', started, sleepMs: 20 })),
    );
    expect(Date.parse(started)).not.toBeNaN();
    expect(output.wrapped.map((r) => r.echo.value)).toEqual(raw);
    expect(concurrency.max).toBe(2);
  });

  it('records Map states, iterations and each iteration’s Task attempts as GetExecutionHistory does', async () => {
    const run = await runtime.startExecution('map-machine', { items: ['a', 'b', 'c'], raw: [], tag: 'x' });
    const types = run.history.map((e) => e.type);
    const entered = types.indexOf('MapStateEntered');
    expect(types.slice(entered, entered + 3)).toEqual(['MapStateEntered', 'MapStateStarted', 'MapIterationStarted']);
    expect(run.history[entered + 1]!.mapStateStartedEventDetails).toEqual({ length: 3 });
    const iterations = run.history.filter(
      (e) => e.type === 'MapIterationSucceeded' && e.mapIterationSucceededEventDetails!.name === 'Items',
    );
    expect(iterations.map((e) => e.mapIterationSucceededEventDetails!.index).sort()).toEqual([0, 1, 2]);
    const itemsExit = types.findIndex(
      (t, i) => t === 'MapStateExited' && run.history[i]!.stateExitedEventDetails!.name === 'Items',
    );
    expect(types[itemsExit - 1]).toBe('MapStateSucceeded');
    expect(
      run.history.filter((e) => e.type === 'MapStateStarted').map((e) => e.mapStateStartedEventDetails!.length),
    ).toEqual([3, 0]);

    // Each attempt is attributed to its own iteration, although the iterations ran concurrently.
    const events = byId(run.history);
    const scheduled = run.history.filter((e) => e.type === 'LambdaFunctionScheduled');
    expect(scheduled).toHaveLength(3);
    for (const e of scheduled)
      expect(JSON.parse(e.lambdaFunctionScheduledEventDetails!.input!).index).toBe(iterationOf(e, events));
    const trail = stepTrail(run.history);
    expect(trail.map((s) => s.name)).toEqual(['Record', 'Record', 'Record']);
    for (const step of trail)
      expect((step.output as { echo: { index: number } }).echo.index).toBe((step.input as { index: number }).index);
  });

  it('records the failed iteration and the ones the failure stopped', async () => {
    const run = await runtime.startExecution('failing-map', {
      items: [{ fail: true }, { sleepMs: 300 }, { sleepMs: 300 }],
    });
    expect(run).toMatchObject({ status: 'FAILED', error: { Error: 'InvalidInputError' } });
    const iterations = run.history
      .filter((e) => e.type?.startsWith('MapIteration'))
      .map((e) => {
        const details =
          e.mapIterationStartedEventDetails ?? e.mapIterationFailedEventDetails ?? e.mapIterationAbortedEventDetails;
        return `${e.type} ${details!.index}`;
      });
    expect(iterations.slice(3)).toEqual(['MapIterationFailed 0', 'MapIterationAborted 1', 'MapIterationAborted 2']);
    expect(run.history.map((e) => e.type).slice(-2)).toEqual(['MapStateFailed', 'ExecutionFailed']);
  });
});

describe('Parallel', () => {
  it('runs every branch’s Tasks (function ARN and lambda:invoke) locally and records the Parallel state', async () => {
    const run = await runtime.startExecution('parallel-machine', {}, { name: 'parallel-1' });
    expect(run.status).toBe('SUCCEEDED');
    expect((run.output as Array<{ echo: unknown }>).map((b) => b.echo)).toEqual([
      { execution: 'parallel-1', side: 'left' },
      { execution: 'parallel-1', side: 'right' },
    ]);
    const types = run.history.map((e) => e.type);
    expect(types.slice(1, 3)).toEqual(['ParallelStateEntered', 'ParallelStateStarted']);
    expect(types.slice(-3)).toEqual(['ParallelStateSucceeded', 'ParallelStateExited', 'ExecutionSucceeded']);
    expect(types.filter((t) => t === 'TaskScheduled' || t === 'LambdaFunctionScheduled')).toHaveLength(2);
    expect(
      stepTrail(run.history)
        .map((s) => s.name)
        .sort(),
    ).toEqual(['Left', 'Right']);
  });
});

describe('a Task the runtime cannot map', () => {
  it('fails the execution with States.Runtime naming the state and resource, past a States.ALL Catch (a function not in the app, in a Map)', async () => {
    const run = await runtime.startExecution('unmapped-function', { items: [1] });
    expect(run.status).toBe('FAILED');
    expect(run.error?.Error).toBe('States.Runtime');
    expect(run.error?.Cause).toContain(
      'Task "CallElsewhere": no local handler for resource arn:aws:lambda:us-east-1:123456789012:function:elsewhere',
    );
    expect(run.history.some((e) => e.stateEnteredEventDetails?.name === 'SwallowedMap')).toBe(false);
    expect(run.history.map((e) => e.type)).toContain('MapStateFailed');
  });

  it('fails the same way for a service integration with no stand-in (in a Parallel branch)', async () => {
    const run = await runtime.startExecution('unmapped-service', {});
    expect(run.status).toBe('FAILED');
    expect(run.error).toMatchObject({ Error: 'States.Runtime' });
    expect(run.error?.Cause).toContain(
      'Task "ListBuckets": no local handler for resource arn:aws:states:::aws-sdk:s3:listBuckets',
    );
    expect(run.history.some((e) => e.stateEnteredEventDetails?.name === 'SwallowedParallel')).toBe(false);
  });

  it('runs once the integration has a stand-in (serviceIntegrations apply at any depth)', async () => {
    const withStandIn = await LocalRuntime.create({
      app,
      historyDir: false,
      serviceIntegrations: { 'arn:aws:states:::aws-sdk:s3:listBuckets': () => ({ Buckets: [{ Name: 'local' }] }) },
    });
    const run = await withStandIn.startExecution('unmapped-service', {});
    expect(run.status).toBe('SUCCEEDED');
    expect(run.output).toEqual([{ Buckets: [{ Name: 'local' }] }]);
  });
});

describe('a distributed Map', () => {
  it('is refused before anything runs (the interpreter would run it as an inline Map)', async () => {
    await expect(runtime.startExecution('distributed-map', { items: [1] })).rejects.toThrow(
      /distributed Map state "Distributed" cannot run locally/,
    );
  });
});

describe('timeouts', () => {
  it('fails a function running past its template Timeout with Sandbox.Timedout, which Catch matches by name', async () => {
    const run = await runtime.startExecution('lambda-timeout', { sleepMs: 1500 });
    expect(run.status).toBe('SUCCEEDED');
    const error = (run.output as { error: { Error: string; Cause: string } }).error;
    expect(error.Error).toBe('Sandbox.Timedout');
    expect(JSON.parse(error.Cause)).toEqual({
      errorType: 'Sandbox.Timedout',
      errorMessage: expect.stringMatching(/^RequestId: \S+ Error: Task timed out after 1\.00 seconds$/),
    });
    expect(run.history.find((e) => e.type === 'LambdaFunctionFailed')!.lambdaFunctionFailedEventDetails!.error).toBe(
      'Sandbox.Timedout',
    );

    const fast = await runtime.startExecution('lambda-timeout', { sleepMs: 10 });
    expect(fast.output).not.toHaveProperty('error');
  });

  it('times a Task out after its TimeoutSeconds with States.Timeout', async () => {
    const run = await runtime.startExecution('task-timeout', { sleepMs: 1500 });
    expect(run).toMatchObject({ status: 'FAILED', error: { Error: 'States.Timeout' } });
    expect(
      run.history.find((e) => e.type === 'LambdaFunctionScheduled')!.lambdaFunctionScheduledEventDetails!
        .timeoutInSeconds,
    ).toBe(1);
    expect(run.history.map((e) => e.type)).toContain('LambdaFunctionTimedOut');
  });

  it('times a Task out after its HeartbeatSeconds (local tasks send no heartbeats) with States.Timeout', async () => {
    const run = await runtime.startExecution('heartbeat-timeout', { sleepMs: 1500 });
    expect(run).toMatchObject({ status: 'FAILED', error: { Error: 'States.Timeout' } });
    expect(run.history.find((e) => e.type === 'TaskScheduled')!.taskScheduledEventDetails).toMatchObject({
      timeoutInSeconds: 10,
      heartbeatInSeconds: 1,
    });
    expect(run.history.map((e) => e.type)).toContain('TaskTimedOut');
  });
});
