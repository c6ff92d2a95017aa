/**
 * The 256 KiB payload quota as Step Functions applies it (recorded against AWS in LocalStack's
 * validated `test_states_errors` snapshots): a Task result over it is a task failure that Catch
 * (even States.ALL) handles; a state's input or output over it ends the execution, terminal.
 */
import { Stack } from 'aws-cdk-lib';
import * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import { beforeAll, describe, expect, it } from 'vitest';
import { PAYLOAD_LIMIT_BYTES, textBytes } from '../../../src/local/asl/limits.ts';

/** The size Step Functions counts. */
const payloadBytes = (value: unknown) => textBytes(JSON.stringify(value));

import { LocalRuntime } from '../../../src/local/asl/runtime.ts';
import { synthesize } from '../../../src/local/cloud/synth.ts';
import { calls } from '../../fixtures/handlers/recorder.ts';
import { invokeByArn, machine, recorderFunction, recorderPayload } from './fixture-app.ts';

const app = synthesize((cdkApp) => {
  const stack = new Stack(cdkApp, 'Limits');
  const recorder = recorderFunction(stack, 'Recorder', 5);
  const caught = (id: string) => new sfn.Pass(stack, id);
  const produce = invokeByArn(stack, 'Produce', recorder, {
    payload: recorderPayload({ 'repeat.$': '$.repeat' }),
    resultPath: sfn.JsonPath.DISCARD,
  });
  machine(
    stack,
    'result-machine',
    produce.addCatch(caught('ResultCaught'), { errors: [sfn.Errors.ALL], resultPath: '$.error' }),
  );
  const grow = invokeByArn(stack, 'Grow', recorder, {
    payload: recorderPayload({ 'repeat.$': '$.repeat' }),
    resultPath: '$.blob',
  });
  machine(
    stack,
    'output-machine',
    grow.addCatch(caught('OutputCaught'), { errors: [sfn.Errors.ALL], resultPath: '$.error' }),
  );
  const twice = invokeByArn(stack, 'Twice', recorder, {
    payload: recorderPayload({ 'a.$': '$.blob', 'b.$': '$.blob' }),
  });
  machine(
    stack,
    'input-machine',
    twice.addCatch(caught('InputCaught'), { errors: [sfn.Errors.ALL], resultPath: '$.error' }),
  );
});

let runtime: LocalRuntime;
beforeAll(async () => {
  runtime = await LocalRuntime.create({ app, historyDir: false });
});

const repeat = (char: string, count: number) => ({ repeat: { char, count } });

describe('a Task result over 256 KiB', () => {
  it('is accepted at exactly 262,144 bytes of JSON', async () => {
    const run = await runtime.startExecution('result-machine', repeat('x', PAYLOAD_LIMIT_BYTES - 2));
    expect(run.status).toBe('SUCCEEDED');
    expect(run.output).not.toHaveProperty('error');
  });

  it('one byte over (UTF-8 counted) fails the task with States.DataLimitExceeded, which Catch States.ALL handles', async () => {
    for (const input of [repeat('x', PAYLOAD_LIMIT_BYTES - 1), repeat('é', PAYLOAD_LIMIT_BYTES / 2)]) {
      const run = await runtime.startExecution('result-machine', input);
      expect(run.status).toBe('SUCCEEDED');
      const error = (run.output as { error: { Error: string; Cause: string } }).error;
      expect(error.Error).toBe('States.DataLimitExceeded');
      expect(error.Cause).toMatch(
        /^The state\/task 'arn:aws:lambda:us-east-1:123456789012:function:\S+' returned a result with a size exceeding the maximum number of bytes service limit\.$/,
      );
      expect(run.history.find((e) => e.type === 'LambdaFunctionFailed')!.lambdaFunctionFailedEventDetails!.error).toBe(
        'States.DataLimitExceeded',
      );
    }
  });
});

describe('a state output over 256 KiB', () => {
  /** The blob length that makes Grow's output (its input plus the blob) exactly `bytes` long. */
  function blobFor(bytes: number): number {
    const size = (n: number) => payloadBytes({ ...repeat('x', n), blob: 'x'.repeat(n) });
    let n = bytes - size(0);
    while (size(n) > bytes) n--;
    expect(size(n)).toBe(bytes);
    return n;
  }

  it('is accepted one byte under the quota', async () => {
    const run = await runtime.startExecution('output-machine', repeat('x', blobFor(PAYLOAD_LIMIT_BYTES - 1)));
    expect(run.status).toBe('SUCCEEDED');
    expect(payloadBytes(run.output)).toBe(PAYLOAD_LIMIT_BYTES - 1);
  });

  it('one byte over ends the execution with States.DataLimitExceeded: terminal, past a States.ALL Catch, the state never exits', async () => {
    const run = await runtime.startExecution('output-machine', repeat('x', blobFor(PAYLOAD_LIMIT_BYTES + 1)));
    expect(run.status).toBe('FAILED');
    expect(run.error).toEqual({
      Error: 'States.DataLimitExceeded',
      Cause: "The state/task 'Grow' returned a result with a size exceeding the maximum number of bytes service limit.",
    });
    const types = run.history.map((e) => e.type);
    expect(types).not.toContain('TaskStateExited');
    expect(types.at(-1)).toBe('ExecutionFailed');
    expect(run.history.some((e) => e.stateEnteredEventDetails?.name === 'OutputCaught')).toBe(false);
  });
});

describe('a state input over 256 KiB after Parameters', () => {
  it('ends the execution before the task runs', async () => {
    const run = await runtime.startExecution('input-machine', { blob: 'x'.repeat(150_000) }, { name: 'input-1' });
    expect(run).toMatchObject({ status: 'FAILED', error: { Error: 'States.DataLimitExceeded' } });
    expect(run.error?.Cause).toContain("The state/task 'Twice' received an input of");
    expect(calls.filter((c) => c.event.execution === 'input-1')).toHaveLength(0);
    expect(run.history.some((e) => e.stateEnteredEventDetails?.name === 'InputCaught')).toBe(false);
  });
});
