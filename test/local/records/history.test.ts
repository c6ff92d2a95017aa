import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ExecutionDoesNotExist, GetExecutionHistoryCommand, type HistoryEvent, SFNClient } from '@aws-sdk/client-sfn';
import { mockClient } from 'aws-sdk-client-mock';
import { describe, expect, it } from 'vitest';
import { InvalidInputError } from '../../../src/core/errors.ts';
import {
  parseExecutionArn,
  readAwsExecution,
  readLocalExecution,
  stateTransitions,
  stepTrail,
  summarizeExecution,
  writeLocalExecution,
} from '../../../src/local/records/history.ts';
import { useTempDirs } from '../../support/tmp.ts';

const ARN = 'arn:aws:states:eu-west-1:111122223333:execution:CaseDesk:msg-1';
const FN = 'arn:aws:lambda:eu-west-1:111122223333:function:Step';

/**
 * A deployed-style history: step a succeeds, step b is throttled once then fails permanently (caught), the fallback
 * ends it.
 */
function history(): HistoryEvent[] {
  const raw: Array<Omit<HistoryEvent, 'id' | 'previousEventId' | 'timestamp'>> = [
    {
      type: 'ExecutionStarted',
      executionStartedEventDetails: { input: '{"email":{"id":"m1"}}', roleArn: 'arn:aws:iam::1:role/R' },
    },
    { type: 'PassStateEntered', stateEnteredEventDetails: { name: 'Start', input: '{}' } },
    { type: 'PassStateExited', stateExitedEventDetails: { name: 'Start', output: '{}' } },
    { type: 'TaskStateEntered', stateEnteredEventDetails: { name: 'a', input: '{"state":1}' } },
    {
      type: 'LambdaFunctionScheduled',
      lambdaFunctionScheduledEventDetails: { resource: FN, input: '{"workflow":"wf","step":"a"}' },
    },
    { type: 'LambdaFunctionStarted' },
    {
      type: 'LambdaFunctionSucceeded',
      lambdaFunctionSucceededEventDetails: { output: '{"step":"a","next":"b","reason":"found it","data":{"x":1}}' },
    },
    { type: 'TaskStateExited', stateExitedEventDetails: { name: 'a', output: '{}' } },
    { type: 'ChoiceStateEntered', stateEnteredEventDetails: { name: 'a.route', input: '{}' } },
    { type: 'ChoiceStateExited', stateExitedEventDetails: { name: 'a.route', output: '{}' } },
    { type: 'TaskStateEntered', stateEnteredEventDetails: { name: 'b', input: '{}' } },
    {
      type: 'LambdaFunctionScheduled',
      lambdaFunctionScheduledEventDetails: { resource: FN, input: '{"step":"b","try":1}' },
    },
    { type: 'LambdaFunctionStarted' },
    {
      type: 'LambdaFunctionFailed',
      lambdaFunctionFailedEventDetails: { error: 'ModelThrottledError', cause: '{"errorType":"ModelThrottledError"}' },
    },
    {
      type: 'LambdaFunctionScheduled',
      lambdaFunctionScheduledEventDetails: { resource: FN, input: '{"step":"b","try":2}' },
    },
    { type: 'LambdaFunctionStarted' },
    {
      type: 'LambdaFunctionFailed',
      lambdaFunctionFailedEventDetails: { error: 'InvalidModelOutputError', cause: 'bad' },
    },
    { type: 'TaskStateExited', stateExitedEventDetails: { name: 'b', output: '{}' } },
    { type: 'TaskStateEntered', stateEnteredEventDetails: { name: 'z', input: '{}' } },
    {
      type: 'TaskScheduled',
      taskScheduledEventDetails: {
        resourceType: 'lambda',
        resource: 'invoke',
        region: 'eu-west-1',
        parameters: '{"Payload":{"step":"z"}}',
      },
    },
    { type: 'TaskStarted', taskStartedEventDetails: { resourceType: 'lambda', resource: 'invoke' } },
    {
      type: 'TaskSucceeded',
      taskSucceededEventDetails: {
        resourceType: 'lambda',
        resource: 'invoke',
        output: '{"step":"z","next":"DONE","reason":"handed off"}',
      },
    },
    { type: 'TaskStateExited', stateExitedEventDetails: { name: 'z', output: '{}' } },
    { type: 'SucceedStateEntered', stateEnteredEventDetails: { name: 'Done', input: '{}' } },
    { type: 'SucceedStateExited', stateExitedEventDetails: { name: 'Done', output: '{"ok":true}' } },
    { type: 'ExecutionSucceeded', executionSucceededEventDetails: { output: '{"ok":true}' } },
  ];
  return raw.map(
    (e, i) =>
      ({ ...e, id: i + 1, previousEventId: i, timestamp: new Date(Date.UTC(2025, 0, 1, 0, 0, i)) }) as HistoryEvent,
  );
}

const tmp = useTempDirs('stepwise-history-');

describe('stepTrail', () => {
  it('lists Task states in order with the task input/output, retries, routing and the error that ended a step', () => {
    const trail = stepTrail(history());
    expect(trail.map((s) => s.name)).toEqual(['a', 'b', 'z']);
    expect(trail[0]).toMatchObject({
      type: 'Task',
      input: { workflow: 'wf', step: 'a' },
      output: { next: 'b', data: { x: 1 } },
      next: 'b',
      reason: 'found it',
      retries: 0,
    });
    expect(trail[0]!.error).toBeUndefined();
    expect(trail[0]!.enteredAt).toEqual(new Date(Date.UTC(2025, 0, 1, 0, 0, 3)));
    expect(trail[0]!.exitedAt).toEqual(new Date(Date.UTC(2025, 0, 1, 0, 0, 7)));
    expect(trail[1]).toMatchObject({
      input: { step: 'b', try: 2 },
      retries: 1,
      error: { error: 'InvalidModelOutputError', cause: 'bad' },
    });
    expect(trail[1]!.output).toBeUndefined();
    expect(trail[2]).toMatchObject({
      input: { Payload: { step: 'z' } },
      next: 'DONE',
      reason: 'handed off',
      retries: 0,
    });
  });

  it('clears the error once a retry succeeds, and takes the execution error for a step that never finished', () => {
    const events = history();
    const retried = events
      .filter((e) => e.id! <= 16 || e.id === 18)
      .concat([
        {
          id: 30,
          type: 'LambdaFunctionSucceeded',
          timestamp: new Date(),
          lambdaFunctionSucceededEventDetails: { output: '{"next":"z"}' },
        },
      ]);
    retried.splice(
      retried.findIndex((e) => e.id === 18),
      1,
    );
    const bRetried = stepTrail(retried)[1]!;
    expect(bRetried).toMatchObject({ retries: 1, next: 'z' });
    expect(bRetried.error).toBeUndefined();

    const crashed = events.slice(0, 13).concat([
      {
        id: 99,
        type: 'ExecutionFailed',
        timestamp: new Date(),
        executionFailedEventDetails: { error: 'States.Runtime', cause: 'boom' },
      },
    ]);
    expect(stepTrail(crashed)[1]!.error).toEqual({ error: 'States.Runtime', cause: 'boom' });
  });
});

describe('stateTransitions', () => {
  it('counts every state entered plus every retry', () => {
    // Start, a, a.route, b (+1 retry), z, Done
    expect(stateTransitions(history())).toBe(7);
  });
});

describe('summarizeExecution', () => {
  it('derives status, dates, input, output and workflow from the events', () => {
    const record = summarizeExecution(ARN, history());
    expect(record).toMatchObject({
      executionArn: ARN,
      name: 'msg-1',
      stateMachine: 'arn:aws:states:eu-west-1:111122223333:stateMachine:CaseDesk',
      workflow: 'wf',
      status: 'SUCCEEDED',
      input: { email: { id: 'm1' } },
      output: { ok: true },
      startDate: new Date(Date.UTC(2025, 0, 1)),
    });
    expect(record.error).toBeUndefined();
  });

  it("takes the workflow from the first Task's input as invoked, or as entered when it never was", () => {
    const unscheduled = history()
      .filter((e) => e.type !== 'LambdaFunctionScheduled' || e.id !== 5)
      .map((e) =>
        e.id === 4 ? { ...e, stateEnteredEventDetails: { name: 'a', input: '{"workflow":"as-entered"}' } } : e,
      );
    for (const events of [history(), unscheduled]) {
      expect(summarizeExecution(ARN, events).workflow).toBe(
        (stepTrail(events)[0]!.input as { workflow: string }).workflow,
      );
    }
    expect(summarizeExecution(ARN, unscheduled).workflow).toBe('as-entered');
  });

  it('takes the workflow from a later Task when the first names none (a workflow step, an event step)', () => {
    // The first Task starts a child (its parameters name no workflow); an event step's wait Task names it in Payload.
    const events = history().map(
      (e): HistoryEvent =>
        e.id === 5
          ? {
              ...e,
              type: 'TaskScheduled',
              lambdaFunctionScheduledEventDetails: undefined,
              taskScheduledEventDetails: {
                resourceType: 'states',
                resource: 'startExecution',
                region: 'us-east-1',
                parameters: '{"Input":{},"StateMachineArn":"arn:aws:states:us-east-1:1:stateMachine:Child"}',
              },
            }
          : e.id === 12
            ? { ...e, lambdaFunctionScheduledEventDetails: { resource: FN, input: '{"Payload":{"workflow":"wf"}}' } }
            : e,
    );
    expect(summarizeExecution(ARN, events).workflow).toBe('wf');
  });

  it('reports a failure and a running execution', () => {
    const failed = history().slice(0, 10);
    failed.push({
      id: 11,
      type: 'ExecutionFailed',
      timestamp: new Date(),
      executionFailedEventDetails: { error: 'MaxStepsExceeded' },
    });
    expect(summarizeExecution(ARN, failed)).toMatchObject({ status: 'FAILED', error: { Error: 'MaxStepsExceeded' } });
    expect(summarizeExecution(ARN, history().slice(0, 5))).toMatchObject({ status: 'RUNNING' });
    expect(summarizeExecution(ARN, history().slice(0, 5)).stopDate).toBeUndefined();
  });

  it('parses Standard and Express execution ARNs, and rejects others', () => {
    expect(parseExecutionArn('arn:aws:states:us-east-1:1:express:Member:abc:0f0f')).toEqual({
      stateMachine: 'arn:aws:states:us-east-1:1:stateMachine:Member',
      name: 'abc',
    });
    expect(() => parseExecutionArn('arn:aws:states:us-east-1:1:stateMachine:Member')).toThrow(InvalidInputError);
  });
});

describe('local execution files', () => {
  it('round-trips a record with its dates', () => {
    const dir = tmp();
    const record = summarizeExecution(ARN, history());
    writeLocalExecution(record, dir);
    const byName = readLocalExecution('msg-1', dir);
    expect(byName).toEqual(record);
    expect(byName.events[0]!.timestamp).toBeInstanceOf(Date);
    expect(readLocalExecution(ARN, dir).name).toBe('msg-1');
  });

  it('throws ExecutionDoesNotExist for a missing name or a different ARN, InvalidInputError for a bad file', () => {
    const dir = tmp();
    writeLocalExecution(summarizeExecution(ARN, history()), dir);
    expect(() => readLocalExecution('nope', dir)).toThrow(ExecutionDoesNotExist);
    expect(() => readLocalExecution(ARN.replace('CaseDesk', 'Other'), dir)).toThrow(ExecutionDoesNotExist);
    writeFileSync(join(dir, 'broken.json'), '{"name": 1}');
    expect(() => readLocalExecution('broken', dir)).toThrow(InvalidInputError);
    writeFileSync(join(dir, 'garbage.json'), 'not json');
    expect(() => readLocalExecution('garbage', dir)).toThrow(/not JSON/);
  });
});

describe('readAwsExecution', () => {
  it('reads every page of GetExecutionHistory', async () => {
    const sfn = mockClient(SFNClient);
    const events = history();
    sfn
      .on(GetExecutionHistoryCommand, { executionArn: ARN, nextToken: undefined })
      .resolves({ events: events.slice(0, 10), nextToken: 'page-2' })
      .on(GetExecutionHistoryCommand, { executionArn: ARN, nextToken: 'page-2' })
      .resolves({ events: events.slice(10) });
    const record = await readAwsExecution(ARN, new SFNClient({ region: 'eu-west-1' }));
    expect(sfn.commandCalls(GetExecutionHistoryCommand)).toHaveLength(2);
    expect(record.events).toEqual(events);
    expect(record.status).toBe('SUCCEEDED');
    expect(stepTrail(record.events).map((s) => s.name)).toEqual(['a', 'b', 'z']);
    sfn.restore();
  });

  it('rejects what is not an execution ARN before calling AWS', async () => {
    const sfn = mockClient(SFNClient);
    await expect(readAwsExecution('msg-1', new SFNClient({ region: 'eu-west-1' }))).rejects.toThrow(InvalidInputError);
    expect(sfn.calls()).toHaveLength(0);
    sfn.restore();
  });
});
