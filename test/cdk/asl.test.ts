/**
 * A workflow compiles exactly to the ASL contract (docs of the contract: the brief's asl.md, mirrored in
 * agent-workflow.ts), checked on the fixture project's case-desk: LLM and code steps, a fallback, a retry policy.
 */
import { createRequire } from 'node:module';
import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { MAX_STEPS_HANDOFF, routeStateName, TERMINAL_STATES } from '../../src/cdk/constructs/agent-workflow.ts';
import { TRANSIENT_ERRORS } from '../../src/core/errors.ts';
import { loadWorkflow } from '../../src/definitions/workflow/loader.ts';
import { DONE } from '../../src/definitions/workflow/schema.ts';
import { FIXTURE_STATEMACHINES } from '../support/fixture-project.ts';
import { allStacks, functionArn, functionOfStep, stateMachineOf, synthApp } from './template.ts';

const validateAsl = createRequire(import.meta.url)('asl-validator') as (definition: unknown) => {
  isValid: boolean;
  errorsText: (separator?: string) => string;
};

const workflow = loadWorkflow('case-desk', FIXTURE_STATEMACHINES);
const { manifest, steps } = workflow;
const { template } = synthApp('dev');
const { resource, raw, asl } = stateMachineOf(template);
const states: Record<string, any> = asl.States;

describe('case-desk compiles to the ASL contract', () => {
  it('has exactly Start, one Task and one route Choice per step, the breaker hand-off, and the four terminal states', () => {
    const expected = [
      'Start',
      ...steps.flatMap((s) => [s.name, routeStateName(s.name)]),
      MAX_STEPS_HANDOFF,
      ...Object.values(TERMINAL_STATES),
    ];
    expect(Object.keys(states).sort()).toEqual(expected.sort());
    expect(asl.StartAt).toBe('Start');
    for (const s of steps) {
      expect(states[s.name].Type).toBe('Task');
      expect(states[routeStateName(s.name)].Type).toBe('Choice');
    }
    expect(asl.QueryLanguage ?? 'JSONPath').toBe('JSONPath');
  });

  it('starts with a Pass that puts the input at $.input and an empty StepState at $.result', () => {
    expect(states.Start).toEqual({
      Type: 'Pass',
      Comment: `Start: the execution input goes to $.input and an empty result routes to the entry step ${manifest.entry}.`,
      Parameters: {
        'input.$': '$',
        result: { step: null, next: manifest.entry, reason: 'start', decidedBy: null, fields: {}, data: {}, count: 0 },
        error: null,
      },
      Next: manifest.entry,
    });
  });

  it.each(steps.map((s) => [s.name]))(
    'Task %s invokes its own function with the StepInput and keeps exactly the StepState',
    (name) => {
      const task = states[name];
      expect(task.Resource).toBe(functionArn(functionOfStep(template, name)));
      expect(task.Parameters).toEqual({
        workflow: manifest.name,
        step: name,
        'input.$': '$.input',
        'previous.$': '$.result',
        'error.$': '$.error',
        'count.$': 'States.MathAdd($.result.count, 1)',
        execution: { 'id.$': '$$.Execution.Id', 'name.$': '$$.Execution.Name' },
      });
      expect(task.ResultSelector).toEqual({
        'step.$': '$.step',
        'next.$': '$.next',
        'reason.$': '$.reason',
        'decidedBy.$': '$.decidedBy',
        'fields.$': '$.fields',
        'data.$': '$.data',
        'count.$': '$.count',
      });
      expect(task.ResultPath).toBe('$.result');
      expect(task.Next).toBe(routeStateName(name));
    },
  );

  it('retries transient errors first, with the manifest backoff and full jitter, then Lambda service errors', () => {
    const { retry } = manifest;
    for (const s of steps) {
      expect(states[s.name].Retry).toEqual([
        {
          ErrorEquals: [...TRANSIENT_ERRORS],
          IntervalSeconds: retry.intervalSeconds,
          MaxAttempts: retry.maxAttempts,
          BackoffRate: retry.backoffRate,
          MaxDelaySeconds: retry.maxDelaySeconds,
          JitterStrategy: 'FULL',
        },
        {
          ErrorEquals: [
            'Lambda.ServiceException',
            'Lambda.AWSLambdaException',
            'Lambda.SdkClientException',
            'Lambda.TooManyRequestsException',
            'Lambda.ClientExecutionTimeoutException',
          ],
          IntervalSeconds: 2,
          MaxAttempts: 6,
          BackoffRate: 2,
        },
      ]);
    }
    expect(TRANSIENT_ERRORS).toEqual(['ModelThrottledError', 'ModelTimeoutError', 'ToolUnavailableError']);
  });

  it('catches every error into $.error and goes to the fallback (the fallback itself to FallbackFailed)', () => {
    for (const s of steps) {
      const next = s.name === manifest.fallback ? TERMINAL_STATES.fallbackFailed : manifest.fallback;
      expect(states[s.name].Catch).toEqual([{ ErrorEquals: ['States.ALL'], ResultPath: '$.error', Next: next }]);
    }
  });

  it.each(steps.map((s) => [s.name]))(
    '%s.route: circuit breaker first, then exactly the declared edges, Default to the fallback',
    (name) => {
      const step = steps.find((s) => s.name === name)!;
      const route = states[routeStateName(name)];
      expect(route.Choices[0]).toEqual({
        And: [
          { Variable: '$.result.count', NumericGreaterThanEquals: manifest.maxSteps },
          { Not: { Variable: '$.result.next', StringEquals: DONE } },
        ],
        // The fallback answers even a tripped breaker; only the fallback's own breaker is terminal.
        Next: name === manifest.fallback ? TERMINAL_STATES.maxStepsExceeded : MAX_STEPS_HANDOFF,
      });
      expect(route.Choices.slice(1)).toEqual(
        step.next.map((edge) => ({
          Variable: '$.result.next',
          StringEquals: edge,
          Next: edge === DONE ? TERMINAL_STATES.done : edge,
        })),
      );
      expect(route.Default).toBe(name === manifest.fallback ? TERMINAL_STATES.routeRejected : manifest.fallback);
    },
  );

  it('hands a tripped breaker to the fallback with the reason at $.error', () => {
    expect(states[MAX_STEPS_HANDOFF]).toMatchObject({
      Type: 'Pass',
      Result: { Error: 'MaxStepsExceeded', Cause: expect.stringContaining(String(manifest.maxSteps)) },
      ResultPath: '$.error',
      Next: manifest.fallback,
    });
  });

  it('ends in Done (Succeed) or a named Fail', () => {
    expect(states.Done).toEqual({ Type: 'Succeed', Comment: 'The workflow finished: a step routed to DONE.' });
    for (const name of ['MaxStepsExceeded', 'FallbackFailed', 'RouteRejected']) {
      expect(states[name]).toEqual({ Type: 'Fail', Error: name, Comment: expect.stringContaining(manifest.fallback) });
    }
  });

  it('is a Standard state machine logging ALL with execution data, traced with X-Ray', () => {
    expect(resource.Properties.StateMachineType).toBe('STANDARD');
    expect(resource.Properties.TracingConfiguration).toEqual({ Enabled: true });
    expect(resource.Properties.LoggingConfiguration).toMatchObject({ Level: 'ALL', IncludeExecutionData: true });
    expect(
      resource.Properties.LoggingConfiguration.Destinations[0].CloudWatchLogsLogGroup.LogGroupArn['Fn::GetAtt'][1],
    ).toBe('Arn');
    expect(resource.Metadata['stepwise:workflow']).toBe('case-desk');
  });

  it('keeps execution data (sender, subject, step outputs) out of the prod state machine logs, still at level ALL', () => {
    const prod = synthApp('prod');
    for (const stack of Object.values(allStacks(prod.stacks)))
      for (const machine of Object.values(Template.fromStack(stack).findResources('AWS::StepFunctions::StateMachine')))
        expect(machine.Properties.LoggingConfiguration).toMatchObject({ Level: 'ALL', IncludeExecutionData: false });
  });

  it('alarms on failed executions at the configured threshold', () => {
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'AWS/States',
      MetricName: 'ExecutionsFailed',
      Statistic: 'Sum',
      Threshold: 5,
      EvaluationPeriods: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
    });
  });

  it('alarms on fallback hand-offs, watching exactly the metric the fallback function emits', () => {
    const { fallback } = manifest;
    const env = template.toJSON().Resources[functionOfStep(template, fallback)].Properties.Environment.Variables;
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: env.POWERTOOLS_METRICS_NAMESPACE,
      MetricName: 'FallbackHandoff',
      Dimensions: [
        { Name: 'service', Value: env.POWERTOOLS_SERVICE_NAME },
        { Name: 'step', Value: fallback },
        { Name: 'workflow', Value: env.WORKFLOW },
      ],
      Statistic: 'Sum',
      Threshold: 5,
    });
  });

  it('is valid ASL (asl-validator) and contains no unresolved CDK token', () => {
    const result = validateAsl(asl);
    expect(result.errorsText('\n')).toBe('');
    expect(result.isValid).toBe(true);
    expect(JSON.stringify(raw)).not.toContain('${Token[');
  });
});
