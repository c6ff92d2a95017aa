/**
 * Fault injection through `LocalRuntimeOptions.faults`: typed errors that Retry/Catch match, latency,
 * Lambda timeouts and crashes after the handler's side effects, for the first N attempts only. The
 * recorder fixture counts the handler's runs (its side effects).
 */
import { Duration, Stack } from 'aws-cdk-lib';
import * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import * as tasks from 'aws-cdk-lib/aws-stepfunctions-tasks';
import { describe, expect, it } from 'vitest';
import { LocalRuntime, type LocalRuntimeOptions } from '../../../src/local/asl/runtime.ts';
import { LocalRuntimeFault } from '../../../src/local/cloud/lambda.ts';
import { synthesize } from '../../../src/local/cloud/synth.ts';
import { stepTrail } from '../../../src/local/records/history.ts';
import { calls } from '../../fixtures/handlers/recorder.ts';
import { invokeByArn, machine, recorderFunction, recorderPayload } from './fixture-app.ts';

const app = synthesize((cdkApp) => {
  const stack = new Stack(cdkApp, 'Faults');
  const recorder = recorderFunction(stack, 'Recorder', 5);
  const quick = recorderFunction(stack, 'QuickFn', 1);
  const retry = { errors: ['Runtime.ExitError', 'ModelThrottledError'], maxAttempts: 3, interval: Duration.seconds(1) };

  const send = invokeByArn(stack, 'Send', recorder, { resultPath: '$.sent' }).addRetry(retry);
  send.addCatch(new sfn.Pass(stack, 'Rejected'), { errors: ['InvalidInputError'], resultPath: '$.error' });
  machine(stack, 'send-machine', send);
  machine(stack, 'quick-machine', invokeByArn(stack, 'Quick', quick));
  machine(
    stack,
    'lagging-machine',
    invokeByArn(stack, 'Lagging', recorder, { taskTimeout: sfn.Timeout.duration(Duration.seconds(1)) }),
  );
  const each = invokeByArn(stack, 'Each', recorder, { payload: recorderPayload({ 'item.$': '$' }) }).addRetry(retry);
  machine(stack, 'batch-machine', new sfn.Map(stack, 'Batch', { itemsPath: '$.items' }).itemProcessor(each));
  machine(
    stack,
    'service-machine',
    new tasks.CallAwsService(stack, 'Describe', { service: 's3', action: 'listBuckets', iamResources: ['*'] }),
  );
});

const runtimeWith = (faults: LocalRuntimeOptions['faults']) =>
  LocalRuntime.create({ app, faults, historyDir: false, retryDelayMs: 0 });
/** How many times the handler ran in an execution. */
const runs = (execution: string) => calls.filter((c) => c.event.execution === execution).length;

describe('faults', () => {
  it('crashAfterSideEffect: the handler runs, the attempt fails with Runtime.ExitError, Retry runs the handler again', async () => {
    const runtime = await runtimeWith({ Send: { crashAfterSideEffect: true, times: 1 } });
    const run = await runtime.startExecution('send-machine', {}, { name: 'crash-1' });
    expect(run.status).toBe('SUCCEEDED');
    expect(runs('crash-1')).toBe(2);
    const failed = run.history.find((e) => e.type === 'LambdaFunctionFailed')!.lambdaFunctionFailedEventDetails!;
    expect(failed.error).toBe('Runtime.ExitError');
    expect(JSON.parse(failed.cause!).errorMessage).toMatch(/Error: Runtime exited with error: exit status 1$/);
    expect(stepTrail(run.history)[0]).toMatchObject({ name: 'Send', retries: 1 });
  });

  it('error: the first `times` attempts fail with the named error (Retry matches it) and the handler does not run', async () => {
    const runtime = await runtimeWith({
      Send: { error: { name: 'ModelThrottledError', message: 'slow down' }, times: 2 },
    });
    const run = await runtime.startExecution('send-machine', {}, { name: 'throttled-1' });
    expect(run.status).toBe('SUCCEEDED');
    expect(runs('throttled-1')).toBe(1);
    const failures = run.history
      .filter((e) => e.type === 'LambdaFunctionFailed')
      .map((e) => e.lambdaFunctionFailedEventDetails!);
    expect(failures.map((f) => [f.error, JSON.parse(f.cause!).errorMessage])).toEqual([
      ['ModelThrottledError', 'slow down'],
      ['ModelThrottledError', 'slow down'],
    ]);
    // A second execution counts its own attempts.
    expect((await runtime.startExecution('send-machine', {}, { name: 'throttled-2' })).status).toBe('SUCCEEDED');
    expect(runs('throttled-2')).toBe(1);
  });

  it('error without `times` fails every attempt; Catch matches it by name', async () => {
    const runtime = await runtimeWith({ Send: { error: { name: 'InvalidInputError' } } });
    const run = await runtime.startExecution('send-machine', {}, { name: 'rejected-1' });
    expect(run.status).toBe('SUCCEEDED');
    expect((run.output as { error: { Error: string } }).error.Error).toBe('InvalidInputError');
    expect(runs('rejected-1')).toBe(0);
  });

  it('timeout: the attempt ends as a Lambda timeout (Sandbox.Timedout); with crashAfterSideEffect the handler ran first', async () => {
    const hang = await (await runtimeWith({ Quick: { timeout: true } })).startExecution(
      'quick-machine',
      {},
      { name: 'hang-1' },
    );
    expect(hang).toMatchObject({ status: 'FAILED', error: { Error: 'Sandbox.Timedout' } });
    expect(runs('hang-1')).toBe(0);
    const late = await (await runtimeWith({ Quick: { timeout: true, crashAfterSideEffect: true } })).startExecution(
      'quick-machine',
      {},
      { name: 'hang-2' },
    );
    expect(late).toMatchObject({ status: 'FAILED', error: { Error: 'Sandbox.Timedout' } });
    expect(runs('hang-2')).toBe(1);
  });

  it('latencyMs delays the attempt: within the Task timeout it succeeds, past it the Task times out', async () => {
    const slow = await runtimeWith({ Lagging: { latencyMs: 1500 } });
    expect(await slow.startExecution('lagging-machine', {})).toMatchObject({
      status: 'FAILED',
      error: { Error: 'States.Timeout' },
    });
    const brief = await runtimeWith({ Lagging: { latencyMs: 5 } });
    const run = await brief.startExecution('lagging-machine', {}, { name: 'lagging-1' });
    expect(run.status).toBe('SUCCEEDED');
    expect(runs('lagging-1')).toBe(1);
  });

  it('applies to Tasks inside a Map, counting attempts across the execution', async () => {
    const runtime = await runtimeWith({ Each: { crashAfterSideEffect: true, times: 1 } });
    const run = await runtime.startExecution('batch-machine', { items: [1, 2, 3] }, { name: 'batch-1' });
    expect(run.status).toBe('SUCCEEDED');
    expect(runs('batch-1')).toBe(4);
    expect(stepTrail(run.history).reduce((sum, s) => sum + s.retries, 0)).toBe(1);
  });

  it('refuses faults that name no Task, inject nothing, or could never end', async () => {
    await expect(runtimeWith({ Nope: { latencyMs: 1 } })).rejects.toThrow(
      /faults\["Nope"\]: no Task state "Nope" in the app/,
    );
    await expect(runtimeWith({ Send: {} })).rejects.toThrow(LocalRuntimeFault);
    await expect(runtimeWith({ Describe: { timeout: true } })).rejects.toThrow(/would never end/);
    await expect(runtimeWith({ Send: { error: { name: 'X' }, times: 0 } })).rejects.toThrow(
      /times must be a positive integer/,
    );
  });
});
