/**
 * Dual mode for an email workflow with a single-prompt agent: the synthesized switch (an SSM parameter the ingress
 * reads, the
 * single-prompt agent deployed beside the step workflow) and its rollback (an alarm on the step
 * workflow's fallback and failure rate whose action flips the switch), then a local simulation:
 * mail routed by the parameter, the alarm's event handled by the rollback function, the next mail
 * routed to the single-prompt agent.
 */
import { GetParameterCommand, PutParameterCommand, SSMClient } from '@aws-sdk/client-ssm';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { WorkflowStack } from '../../../../src/cdk/stacks/workflow-stack.ts';
import { EnvConfigSchema } from '../../../../src/project/config.ts';
import { loadPlugin } from '../../../../src/runtime/plugin.ts';
import { routedStarter, ssmModeStore } from '../../../../src/runtime/triggers/email/orchestration.ts';
import { createHandler as rollbackHandler } from '../../../../src/runtime/triggers/email/rollback-handler.ts';
import type { ExecutionStarter } from '../../../../src/runtime/triggers/email/starter.ts';
import { actionsOf, type Json, statementsOfFunction } from '../../../cdk/template.ts';
import { FIXTURE_STATEMACHINES, fixtureEnv } from '../../../support/fixture-project.ts';

// case-desk: an email workflow with `singlePrompt: true`.
const plugin = await loadPlugin('case-desk', FIXTURE_STATEMACHINES);
const synth = (orchestration?: unknown) => {
  const config = EnvConfigSchema.parse({ ...fixtureEnv('dev'), ...(orchestration !== undefined && { orchestration }) });
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  return Template.fromStack(new WorkflowStack(app, 'Stepwise-CaseDesk-dev', { config, plugin }));
};
const PARAMETER = '/stepwise/dev/case-desk/orchestration';

describe('dual mode in the synthesized template', () => {
  const template = synth();
  const functions = template.findResources('AWS::Lambda::Function');
  const fnWith = (key: string, value: string) =>
    Object.entries(functions).find(([, f]) => f.Properties.Environment?.Variables?.[key] === value)!;

  it('deploys both: the step workflow and the single-prompt agent, and a parameter that says which one mail goes to', () => {
    const machines = Object.values(template.findResources('AWS::StepFunctions::StateMachine'));
    expect(machines).toHaveLength(2);
    template.hasResourceProperties('AWS::SSM::Parameter', { Name: PARAMETER, Type: 'String', Value: 'steps' });
    expect(
      synth({ useStepOrchestrator: false }).findResources('AWS::SSM::Parameter', {
        Properties: { Name: PARAMETER, Value: 'single-prompt' },
      }),
    ).not.toEqual({});
    const [, single] = fnWith('STEP', 'monolithic');
    expect(single.Properties.Environment.Variables).toMatchObject({ WORKFLOW: 'case-desk', STEP: 'monolithic' });
    const ingress = Object.values(functions).find(
      (f) => f.Metadata?.['stepwise:entry'] === 'runtime/triggers/email/handler.ts',
    )!;
    expect(Object.keys(ingress.Properties.Environment.Variables)).toEqual(
      expect.arrayContaining(['ORCHESTRATION_PARAMETER', 'SINGLE_PROMPT_STATE_MACHINE_ARN', 'STATE_MACHINE_ARN']),
    );
  });

  it('alarms on (fallbacks + failed executions) / executions of the step workflow over the window, and its action flips the parameter', () => {
    const [alarm] = Object.values(template.findResources('AWS::CloudWatch::Alarm')).filter((a) =>
      JSON.stringify(a.Properties.AlarmDescription).includes('switched to the single-prompt agent'),
    );
    expect(alarm!.Properties).toMatchObject({
      Threshold: 5,
      ComparisonOperator: 'GreaterThanThreshold',
      EvaluationPeriods: 1,
      TreatMissingData: 'notBreaching',
    });
    const metrics = alarm!.Properties.Metrics as Json[];
    expect(metrics.find((m) => m.Expression)!.Expression).toBe(
      'IF(started >= 20, 100 * (failed + handoffs) / started, 0)',
    );
    expect(
      metrics.filter((m) => m.MetricStat).map((m) => [m.Id, m.MetricStat.Metric.MetricName, m.MetricStat.Period]),
    ).toEqual([
      ['started', 'ExecutionsStarted', 3600],
      ['failed', 'ExecutionsFailed', 3600],
      ['handoffs', 'FallbackHandoff', 3600],
    ]);
    const [rollbackId] = Object.entries(functions).find(
      ([, f]) => f.Metadata?.['stepwise:entry'] === 'runtime/triggers/email/rollback-handler.ts',
    )!;
    expect(JSON.stringify(alarm!.Properties.AlarmActions)).toContain(rollbackId);
    expect(statementsOfFunction(template, rollbackId).flatMap(actionsOf)).toContain('ssm:PutParameter');
  });
});

describe('dual mode simulated locally: switch and rollback', () => {
  const ssm = mockClient(SSMClient);
  afterEach(() => ssm.reset());
  afterAll(() => ssm.restore());

  it('routes mail by the parameter, and after the alarm fires, to the single-prompt agent', async () => {
    let value = 'steps';
    ssm.on(GetParameterCommand).callsFake(() => ({ Parameter: { Value: value } }));
    ssm.on(PutParameterCommand).callsFake((input: { Value: string }) => void (value = input.Value));
    const started: string[] = [];
    const starter = (machine: string): ExecutionStarter => ({
      definitive: true,
      start: async (name) => (started.push(`${machine}:${name}`), 'STARTED'),
    });
    const store = ssmModeStore(new SSMClient({ region: 'us-east-1' }), PARAMETER, 0);
    const ingress = routedStarter(() => store.get(), {
      steps: starter('steps'),
      'single-prompt': starter('single-prompt'),
    });

    await ingress.start('mail-1', { email: {} as never });
    const rollback = rollbackHandler({ ORCHESTRATION_PARAMETER: PARAMETER, POWERTOOLS_LOG_LEVEL: 'SILENT' }, { store });
    expect(await rollback({ alarmData: { alarmName: 'RollbackAlarm', state: { value: 'OK' } } })).toMatchObject({
      flipped: false,
    });
    await ingress.start('mail-2', { email: {} as never });
    expect(
      await rollback({
        alarmData: { alarmName: 'RollbackAlarm', state: { value: 'ALARM', reason: 'Threshold Crossed: 7.5 > 5' } },
      }),
    ).toMatchObject({ flipped: true, from: 'steps' });
    await ingress.start('mail-3', { email: {} as never });
    expect(await rollback({ alarmData: { alarmName: 'RollbackAlarm', state: { value: 'ALARM' } } })).toMatchObject({
      flipped: false,
      why: expect.stringContaining('already on the single-prompt agent'),
    });

    expect(started).toEqual(['steps:mail-1', 'steps:mail-2', 'single-prompt:mail-3']);
    expect(ssm.commandCalls(PutParameterCommand).map((c) => c.args[0].input)).toEqual([
      { Name: PARAMETER, Value: 'single-prompt', Type: 'String', Overwrite: true },
    ]);
  });

  it('reads an unreadable or unknown value as steps, says why, and caches reads for its TTL', async () => {
    let now = 0;
    ssm
      .on(GetParameterCommand)
      .resolvesOnce({ Parameter: { Value: 'legacy' } })
      .rejects(Object.assign(new Error('denied'), { name: 'AccessDeniedException' }));
    const store = ssmModeStore(new SSMClient({ region: 'us-east-1' }), PARAMETER, 30_000, () => now);
    expect(await store.get()).toBe('steps');
    expect(store.lastProblem).toMatch(/holds "legacy", not steps or single-prompt/);
    now = 10_000;
    await store.get();
    expect(ssm.commandCalls(GetParameterCommand)).toHaveLength(1);
    now = 40_000;
    expect(await store.get()).toBe('steps');
    expect(store.lastProblem).toMatch(/could not be read \(AccessDeniedException\)/);
  });
});
