/**
 * The local runtime on a hand-written template: how Task resources map to handler modules
 * (`stepwise:entry` → createHandler(env, services)), the Lambda-like invocation boundary, the
 * Context object, service integrations, Express machines and the stored history.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ExecutionAlreadyExists, InvalidName, StateMachineDoesNotExist } from '@aws-sdk/client-sfn';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../../src/core/paths.ts';
import { LocalRuntime } from '../../../src/local/asl/runtime.ts';
import type { CfnTemplate } from '../../../src/local/cloud/intrinsics.ts';
import { fromTemplates } from '../../../src/local/cloud/synth.ts';
import { readLocalExecution } from '../../../src/local/records/history.ts';
import * as echo from '../../fixtures/handlers/echo.ts';

const fnArn = { 'Fn::GetAtt': ['EchoFn', 'Arn'] };
/** CDK writes definitions as a Fn::Join of JSON text and tokens; so does this. */
function definitionString(definition: object): unknown {
  const text = JSON.stringify(definition);
  const [before, ...rest] = text.split('"@FN@"');
  return { 'Fn::Join': ['', [before, ...rest.flatMap((part) => ['"', fnArn, '"', part])].filter((p) => p !== '')] };
}

const machine = {
  StartAt: 'Echo',
  States: {
    Echo: {
      Type: 'Task',
      Resource: '@FN@',
      Parameters: {
        'mode.$': '$.mode',
        context: {
          'id.$': '$$.Execution.Id',
          'name.$': '$$.Execution.Name',
          'roleArn.$': '$$.Execution.RoleArn',
          'startTime.$': '$$.Execution.StartTime',
          'input.$': '$$.Execution.Input',
          'stateMachineId.$': '$$.StateMachine.Id',
          'stateMachineName.$': '$$.StateMachine.Name',
        },
      },
      ResultPath: '$.echo',
      Catch: [{ ErrorEquals: ['InvalidInputError'], ResultPath: '$.error', Next: 'Caught' }],
      Next: 'Invoke',
    },
    Invoke: {
      Type: 'Task',
      Resource: 'arn:aws:states:::lambda:invoke',
      Parameters: { FunctionName: '@FN@', Payload: { mode: 'integration' } },
      ResultSelector: { 'payload.$': '$.Payload', 'status.$': '$.StatusCode' },
      ResultPath: '$.invoked',
      Next: 'Put',
    },
    Put: {
      Type: 'Task',
      Resource: 'arn:aws:states:::dynamodb:putItem',
      Parameters: { TableName: 'x', Item: { pk: { S: 'a' } } },
      ResultPath: '$.put',
      Catch: [{ ErrorEquals: ['States.ALL'], ResultPath: '$.error', Next: 'Caught' }],
      End: true,
    },
    Caught: { Type: 'Fail', Error: 'Caught' },
  },
};

const template: CfnTemplate = {
  Resources: {
    Table: { Type: 'AWS::DynamoDB::Table', Properties: { TableName: 'echo-table' } },
    EchoFnRole: { Type: 'AWS::IAM::Role', Properties: {} },
    EchoFn: {
      Type: 'AWS::Lambda::Function',
      Metadata: { 'stepwise:entry': 'test/fixtures/handlers/echo.ts' },
      Properties: {
        Timeout: 30,
        Environment: {
          Variables: { TABLE: { Ref: 'Table' }, GREETING: 'hi', STATEMACHINES_DIR: '/var/task/statemachines' },
        },
      },
    },
    MachineRole: { Type: 'AWS::IAM::Role', Properties: {} },
    Machine: {
      Type: 'AWS::StepFunctions::StateMachine',
      Properties: { RoleArn: { 'Fn::GetAtt': ['MachineRole', 'Arn'] }, DefinitionString: definitionString(machine) },
    },
    BrokenFn: {
      Type: 'AWS::Lambda::Function',
      Metadata: { 'stepwise:entry': 'test/fixtures/handlers/does-not-exist.ts' },
      Properties: {},
    },
    Broken: {
      Type: 'AWS::StepFunctions::StateMachine',
      Properties: {
        RoleArn: { 'Fn::GetAtt': ['MachineRole', 'Arn'] },
        DefinitionString: {
          'Fn::Join': [
            '',
            [
              '{"StartAt":"Call","States":{"Call":{"Type":"Task","Resource":"',
              { 'Fn::GetAtt': ['BrokenFn', 'Arn'] },
              '","Catch":[{"ErrorEquals":["States.ALL"],"Next":"Caught"}],"End":true},"Caught":{"Type":"Succeed"}}}',
            ],
          ],
        },
      },
    },
    Fast: {
      Type: 'AWS::StepFunctions::StateMachine',
      Properties: {
        StateMachineName: 'fast-machine',
        StateMachineType: 'EXPRESS',
        RoleArn: { 'Fn::GetAtt': ['MachineRole', 'Arn'] },
        DefinitionString: definitionString({
          StartAt: 'Echo',
          States: { Echo: { Type: 'Task', Resource: '@FN@', End: true } },
        }),
      },
    },
  },
};

const services = { marker: 'local-services' };
let historyDir: string;
let runtime: LocalRuntime;

beforeAll(async () => {
  historyDir = mkdtempSync(join(tmpdir(), 'stepwise-exec-'));
  runtime = await LocalRuntime.create({
    app: fromTemplates({ Demo: template }),
    services,
    historyDir,
    extraEnv: { EXTRA: 'extra' },
    handlerOverrides: { Put: (event: { TableName: string }) => ({ stored: event.TableName }) },
  });
});
afterAll(() => rmSync(historyDir, { recursive: true, force: true }));

describe('LocalRuntime on a template', () => {
  it('maps Tasks to the entry module, with the resolved environment, services and Context object', async () => {
    const before = echo.handlersCreated;
    const run = await runtime.startExecution('Machine', { mode: 'ok' }, { name: 'first' });
    expect(run.status).toBe('SUCCEEDED');
    const arn = 'arn:aws:states:us-east-1:123456789012:execution:Machine:first';
    expect(run.executionArn).toBe(arn);
    const echoed = (run.output as any).echo;
    expect(echoed.env).toEqual({
      TABLE: 'echo-table',
      GREETING: 'hi',
      STATEMACHINES_DIR: join(PROJECT_ROOT, 'statemachines'),
      AWS_REGION: 'us-east-1',
      AWS_LAMBDA_FUNCTION_NAME: 'EchoFn',
      EXTRA: 'extra',
    });
    expect(echoed.services).toEqual(services);
    expect(echoed.functionName).toBe('EchoFn');
    expect(echoed.remainingMs).toBeGreaterThan(0);
    expect(echoed.at).toBe('1970-01-01T00:00:00.000Z');
    expect('nothing' in echoed).toBe(false);
    expect(echoed.event.context).toMatchObject({
      id: arn,
      name: 'first',
      roleArn: 'arn:aws:iam::123456789012:role/MachineRole',
      input: { mode: 'ok' },
      stateMachineId: 'arn:aws:states:us-east-1:123456789012:stateMachine:Machine',
      stateMachineName: 'Machine',
    });
    expect(Date.parse(echoed.event.context.startTime)).not.toBeNaN();
    // lambda:invoke integration: the Payload goes to the handler, the result comes back wrapped.
    expect((run.output as any).invoked).toMatchObject({ status: 200, payload: { event: { mode: 'integration' } } });
    expect((run.output as any).put).toEqual({ stored: 'x' });

    await runtime.startExecution('Machine', { mode: 'ok' }, { name: 'second' });
    // One handler per function, reused by every invocation and execution.
    expect(echo.handlersCreated - before).toBeLessThanOrEqual(1);
    expect(echo.handlersCreated).toBeGreaterThanOrEqual(1);
  });

  it('writes Step Functions history events: Lambda events for function ARNs, Task events for integrations', async () => {
    const run = await runtime.startExecution('Machine', { mode: 'ok' });
    expect(run.history).toBe(run.events);
    expect(run.history.map((e) => e.type)).toEqual([
      'ExecutionStarted',
      'TaskStateEntered',
      'LambdaFunctionScheduled',
      'LambdaFunctionStarted',
      'LambdaFunctionSucceeded',
      'TaskStateExited',
      'TaskStateEntered',
      'TaskScheduled',
      'TaskStarted',
      'TaskSucceeded',
      'TaskStateExited',
      'TaskStateEntered',
      'TaskScheduled',
      'TaskStarted',
      'TaskSucceeded',
      'TaskStateExited',
      'ExecutionSucceeded',
    ]);
    expect(run.history.map((e) => e.id)).toEqual(run.history.map((_, i) => i + 1));
    expect(run.history.map((e) => e.previousEventId)).toEqual(run.history.map((_, i) => i));
    const scheduled = run.history[2]!.lambdaFunctionScheduledEventDetails!;
    expect(scheduled.resource).toBe('arn:aws:lambda:us-east-1:123456789012:function:EchoFn');
    expect(JSON.parse(scheduled.input!)).toMatchObject({ mode: 'ok' });
    expect(run.history[7]!.taskScheduledEventDetails).toMatchObject({ resourceType: 'lambda', resource: 'invoke' });
    expect(run.history[12]!.taskScheduledEventDetails).toMatchObject({ resourceType: 'dynamodb', resource: 'putItem' });
    expect(readLocalExecution(run.name, historyDir)).toEqual({
      ...run,
      history: undefined,
      status: run.status,
    } as never);
  });

  it('surfaces a thrown error like Lambda: Error = its name, Cause = {errorType, errorMessage, trace}', async () => {
    const run = await runtime.startExecution('Machine', { mode: 'invalid' });
    expect(run.status).toBe('FAILED');
    // Fail state without Cause: no cause, as in Step Functions.
    expect(run.error).toEqual({ Error: 'Caught' });
    const failed = run.history.find((e) => e.type === 'LambdaFunctionFailed')!.lambdaFunctionFailedEventDetails!;
    expect(failed.error).toBe('InvalidInputError');
    const cause = JSON.parse(failed.cause!);
    expect(Object.keys(cause)).toEqual(['errorType', 'errorMessage', 'trace']);
    expect(cause).toMatchObject({ errorType: 'InvalidInputError', errorMessage: 'mode "invalid" is refused' });
    expect(cause.trace[0]).toContain('InvalidInputError');
    const failState = run.history.find((e) => e.type === 'FailStateEntered')!;
    expect(JSON.parse(failState.stateEnteredEventDetails!.input!).error).toEqual({
      Error: 'InvalidInputError',
      Cause: failed.cause,
    });
  });

  it('fails loudly (not caught by States.ALL) when a Task has no local handler', async () => {
    const bare = await LocalRuntime.create({ app: fromTemplates({ Demo: template }), historyDir: false });
    const run = await bare.startExecution('Machine', { mode: 'ok' });
    expect(run.status).toBe('FAILED');
    expect(run.error?.Error).toBe('States.Runtime');
    expect(run.error?.Cause).toMatch(/Task "Put": no local handler for resource arn:aws:states:::dynamodb:putItem/);
    expect(run.history.some((e) => e.type === 'FailStateEntered')).toBe(false);
  });

  it('fails loudly when a function’s entry module cannot be imported', async () => {
    const run = await runtime.startExecution('Broken', {});
    expect(run.status).toBe('FAILED');
    expect(run.error?.Error).toBe('States.Runtime');
    expect(run.error?.Cause).toContain('cannot import test/fixtures/handlers/does-not-exist.ts');
  });

  it('enforces execution names like Step Functions: unique per Standard machine, valid characters; Express names may repeat', async () => {
    await runtime.startExecution('Machine', { mode: 'ok' }, { name: 'once' });
    await expect(runtime.startExecution('Machine', { mode: 'ok' }, { name: 'once' })).rejects.toThrow(
      ExecutionAlreadyExists,
    );
    await expect(runtime.startExecution('Machine', {}, { name: 'has space' })).rejects.toThrow(InvalidName);
    const a = await runtime.startSyncExecution('fast-machine', { mode: 'ok' }, { name: 'same' });
    const b = await runtime.startSyncExecution('fast-machine', { mode: 'ok' }, { name: 'same' });
    expect(a.status).toBe('SUCCEEDED');
    expect(a.executionArn).toMatch(/^arn:aws:states:us-east-1:123456789012:express:fast-machine:same:/);
    expect(b.executionArn).not.toBe(a.executionArn);
  });

  it('names the known state machines when asked for an unknown one', async () => {
    await expect(runtime.startExecution('nope', {})).rejects.toThrow(StateMachineDoesNotExist);
    await expect(runtime.startExecution('nope', {})).rejects.toThrow(/known: Demo\/Machine, Demo\/Broken, Demo\/Fast/);
  });
});
