/** CDK assertions on the lead lifecycle stack: the compiled Express state machine, the bus, rules, dead-letter queues, alarms, grants, cdk-nag. */
import { createRequire } from 'node:module';
import { App } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { describe, expect, it } from 'vitest';
import { buildStepwiseApp } from '../../infra/build-app.ts';
import { getEnvConfig } from '../../infra/config.ts';
import { LIFECYCLE_STATES as S, transitionRules } from '../../infra/constructs/lifecycle-workflow.ts';
import { LEAD_EVENT_SOURCES, LIFECYCLE_SOURCE, STATE_CHANGED } from '../../lambdas/lifecycle/envelope.ts';
import { loadAgentConfig, loadLifecycle } from '../../lambdas/lifecycle/loader.ts';
import { LOG_ONLY, routeOf } from '../../lambdas/lifecycle/routes.ts';
import { LEAD_EVENT_TYPES } from '../../lambdas/lifecycle/schema.ts';
import { NOTIFY_STATES } from '../../lambdas/lifecycle/state-changes.ts';
import { lifecycleApp, lifecycleStack, type Json } from './support.ts';

const validateAsl = createRequire(import.meta.url)('asl-validator') as (d: unknown, o?: { checkArn?: boolean; checkPaths?: boolean }) => { isValid: boolean; errorsText: () => string };

const def = loadLifecycle();
const { app, stack } = lifecycleStack();
const template = Template.fromStack(stack);
const asl = lifecycleApp().app.stateMachines.find((m) => m.workflowName === 'lead-lifecycle')!.definition as unknown as { StartAt: string; States: Record<string, Json> };
const logicalId = (construct: { node: { defaultChild?: unknown } }) => stack.getLogicalId(construct.node.defaultChild as never);

/** Evaluate a Choice rule (the operators the compiler emits) against the state the `RouteEvent` Choice sees. */
function holds(rule: Json, input: Json): boolean {
  if (rule.And) return rule.And.every((r: Json) => holds(r, input));
  if (rule.Or) return rule.Or.some((r: Json) => holds(r, input));
  const value = (rule.Variable as string).split('.').slice(1).reduce((v: any, k) => v?.[k], input);
  if ('StringEquals' in rule) return value === rule.StringEquals;
  if ('BooleanEquals' in rule) return value === rule.BooleanEquals;
  throw new Error(`unexpected Choice rule ${JSON.stringify(rule)}`);
}

/** The state `RouteEvent` goes to for a lead in `leaf` and an event of `type`. */
function routed(leaf: string, type: string, duplicate = false): string {
  const input = { loaded: { event: { type }, lead: { state: leaf }, duplicate } };
  const choice = asl.States[S.route]!;
  const matching = (choice.Choices as Json[]).filter((r) => holds(r, input));
  expect(matching.length, `${leaf} + ${type} matches ${matching.length} rules`).toBeLessThanOrEqual(duplicate ? 2 : 1);
  return matching[0]?.Next ?? choice.Default;
}

describe('the lifecycle state machine', () => {
  it('is an Express state machine with full logging and X-Ray, tagged with its lifecycle', () => {
    const [resource] = Object.values(template.findResources('AWS::StepFunctions::StateMachine', { Properties: { StateMachineType: 'EXPRESS' } }));
    expect(resource!.Metadata).toEqual({ 'stepwise:workflow': 'lead-lifecycle' });
    expect(resource!.Properties).toMatchObject({
      TracingConfiguration: { Enabled: true },
      LoggingConfiguration: { Level: 'ALL', IncludeExecutionData: true },
    });
  });

  it('is valid ASL', () => {
    const result = validateAsl(asl, { checkArn: false, checkPaths: true });
    expect(result.isValid, result.errorsText()).toBe(true);
  });

  it('routes every (leaf, event) to the Task of the state that declares its handler, duplicates first, everything else to LogOnly', () => {
    for (const leaf of def.leaves) {
      for (const type of [...LEAD_EVENT_TYPES, 'lead.sneezed']) {
        expect(routed(leaf, type), `${leaf} + ${type}`).toBe(routeOf(def, leaf, type));
        expect(routed(leaf, type, true)).toBe(S.duplicate);
      }
    }
    const declared = def.leaves.flatMap((leaf) => Object.keys(def.handlers[leaf]!).map((type) => routeOf(def, leaf, type)));
    expect(new Set(declared)).toEqual(new Set(transitionRules(def).keys()));
    expect(routed('deal_closed', 'payment.initiated')).toBe(LOG_ONLY);
    expect(routed('no_show', 'meeting.booked')).toBe('lead_qualification: meeting.booked');
  });

  it('has one transition Task per declaration, each applying with the pure function under its own name, then Persist', () => {
    const applyFn = asl.States[LOG_ONLY]!.Resource;
    const tasks = Object.entries(asl.States).filter(([, s]) => s.Resource === applyFn);
    expect(tasks.map(([name]) => name).sort()).toEqual([...transitionRules(def).keys(), LOG_ONLY].sort());
    for (const [name, state] of tasks) {
      expect(state.Parameters).toEqual({ route: name, 'event.$': '$.loaded.event', 'lead.$': '$.loaded.lead' });
      expect(state).toMatchObject({ ResultPath: '$.applied', Next: S.persist, Catch: [{ ErrorEquals: ['States.ALL'], Next: S.deadLetter, ResultPath: '$.error' }] });
      expect(name.length).toBeLessThanOrEqual(80);
    }
  });

  it('re-reads after a version conflict a bounded number of times, and dead-letters whatever fails', () => {
    expect(asl.StartAt).toBe(S.start);
    expect(asl.States[S.persist]!.Catch).toEqual([
      { ErrorEquals: ['VersionConflictError'], ResultPath: '$.error', Next: S.afterConflict },
      { ErrorEquals: ['States.ALL'], ResultPath: '$.error', Next: S.deadLetter },
    ]);
    // The execution id makes a retried Persist the same store request (answered as committed, so the change is published).
    expect(asl.States[S.persist]!.Parameters).toMatchObject({ 'requestId.$': '$$.Execution.Id' });
    expect(asl.States[S.afterConflict]!.Parameters).toEqual({ 'envelope.$': '$.envelope', 'attempt.$': 'States.MathAdd($.attempt, 1)', 'error.$': '$.error' });
    expect(asl.States[S.retryConflict]).toMatchObject({ Choices: [{ Variable: '$.attempt', NumericLessThanEquals: 10, Next: S.loadLead }], Default: S.deadLetter });
    expect(asl.States[S.deadLetter]).toMatchObject({ Resource: 'arn:aws:states:::sqs:sendMessage', Parameters: { 'MessageBody.$': '$' }, Next: S.failed });
    for (const [name, state] of Object.entries(asl.States).filter(([, s]) => s.Type === 'Task' && s.Resource !== 'arn:aws:states:::sqs:sendMessage')) {
      expect(state.Catch?.at(-1), name).toEqual({ ErrorEquals: ['States.ALL'], ResultPath: '$.error', Next: S.deadLetter });
    }
  });

  it('publishes lead.state_changed to the leads bus only after an append that changed state or context', () => {
    expect(asl.States[S.afterPersist]).toMatchObject({
      Choices: [
        { Variable: '$.persisted.status', StringEquals: 'DUPLICATE', Next: S.duplicate },
        { Not: { Variable: '$.applied.stateChanged', IsNull: true }, Next: S.publish },
      ],
      Default: S.done,
    });
    expect(asl.States[S.publish]).toMatchObject({
      Resource: 'arn:aws:states:::events:putEvents',
      Parameters: { Entries: [{ Source: LIFECYCLE_SOURCE, DetailType: STATE_CHANGED, 'Detail.$': '$.applied.stateChanged', EventBusName: expect.stringContaining('event-bus/LeadsBus') }] },
      Next: S.done,
    });
  });

  it('grants each Task only what it does: LoadLead reads, Persist writes, the transition function touches nothing', () => {
    const statementsOf = (fnId: string) => {
      const roleId = template.toJSON().Resources[fnId].Properties.Role['Fn::GetAtt'][0];
      return Object.values(template.findResources('AWS::IAM::Policy'))
        .filter((p) => p.Properties.Roles.some((r: Json) => r.Ref === roleId))
        .flatMap((p) => p.Properties.PolicyDocument.Statement as Json[])
        .flatMap((s) => [s.Action].flat() as string[]);
    };
    const { loadLead, applyEvent, persist } = stack.lifecycle.functions;
    expect(statementsOf(logicalId(applyEvent)).filter((a) => !a.startsWith('logs:') && !a.startsWith('xray:'))).toEqual([]);
    expect(statementsOf(logicalId(loadLead))).toEqual(expect.arrayContaining(['dynamodb:GetItem', 'dynamodb:Query']));
    expect(statementsOf(logicalId(loadLead))).not.toContain('dynamodb:PutItem');
    expect(statementsOf(logicalId(persist))).toEqual(expect.arrayContaining(['dynamodb:PutItem']));
    expect(statementsOf(logicalId(persist))).not.toContain('dynamodb:GetItem');
    template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: Match.objectLike({ LIFECYCLE: 'lead-lifecycle', AGENT_CONFIG: JSON.stringify(loadAgentConfig('book-meeting')) }) },
    });
  });
});

describe('the leads bus and its rules', () => {
  const rules = template.findResources('AWS::Events::Rule');
  const ruleOf = (construct: { node: { defaultChild?: unknown } }) => rules[logicalId(construct)]!.Properties;

  it('is a custom bus named per environment', () => {
    template.hasResourceProperties('AWS::Events::EventBus', { Name: 'stepwise-dev-leads' });
    expect(Object.values(rules).every((r) => r.Properties.EventBusName.Ref === logicalId(stack.eventBus))).toBe(true);
  });

  it('routes CRM, agent and replayed events about a lead to the lifecycle state machine', () => {
    expect(ruleOf(stack.incomingRule)).toMatchObject({
      EventPattern: { source: [...LEAD_EVENT_SOURCES], detail: { leadId: [{ exists: true }] } },
      Targets: [{ Arn: { Ref: logicalId(stack.lifecycle.stateMachine) }, RetryPolicy: { MaximumRetryAttempts: 8, MaximumEventAgeInSeconds: 86400 } }],
    });
  });

  it('feeds lead.state_changed to the CRM sync, the notifier (notify states only) and the follow-up scheduler', () => {
    const pattern = { source: [LIFECYCLE_SOURCE], 'detail-type': [STATE_CHANGED] };
    const { crmSync, notifier, followUpScheduler } = stack.listeners;
    expect(ruleOf(crmSync.rule).EventPattern).toEqual(pattern);
    expect(ruleOf(followUpScheduler.rule).EventPattern).toEqual(pattern);
    expect(ruleOf(notifier.rule).EventPattern).toEqual({ ...pattern, detail: { to: [...NOTIFY_STATES] } });
    for (const listener of [crmSync, notifier, followUpScheduler]) {
      expect(ruleOf(listener.rule).Targets).toEqual([expect.objectContaining({ Arn: { 'Fn::GetAtt': [logicalId(listener.function), 'Arn'] } })]);
    }
    expect(LEAD_EVENT_SOURCES).not.toContain(LIFECYCLE_SOURCE); // what the lifecycle publishes never loops back into it
  });

  it('gives every target a dead-letter queue and a retry policy, and every Lambda listener an on-failure destination', () => {
    const targets = Object.values(rules).flatMap((r) => r.Properties.Targets as Json[]);
    expect(targets).toHaveLength(4);
    for (const target of targets) {
      expect(target.DeadLetterConfig?.Arn?.['Fn::GetAtt']?.[1]).toBe('Arn');
      expect(target.RetryPolicy.MaximumRetryAttempts).toBeGreaterThan(0);
    }
    for (const listener of Object.values(stack.listeners)) {
      template.hasResourceProperties('AWS::Lambda::EventInvokeConfig', {
        FunctionName: { Ref: logicalId(listener.function) },
        DestinationConfig: { OnFailure: { Destination: { 'Fn::GetAtt': [logicalId(listener.deadLetterQueue), 'Arn'] } } },
      });
    }
  });

  it('encrypts every queue and alarms as soon as anything lands in one', () => {
    const queues = template.findResources('AWS::SQS::Queue');
    expect(Object.keys(queues)).toHaveLength(4);
    for (const [id, queue] of Object.entries(queues)) {
      expect(queue.Properties.SqsManagedSseEnabled).toBe(true);
      template.hasResourceProperties('AWS::CloudWatch::Alarm', {
        MetricName: 'ApproximateNumberOfMessagesVisible',
        Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [id, 'QueueName'] } }],
        Threshold: 1,
      });
    }
  });

  it('lets the follow-up scheduler start only the follow-up timer, which waits and then publishes follow_up.due', () => {
    const timer = Object.values(template.findResources('AWS::StepFunctions::StateMachine', { Properties: { StateMachineType: 'STANDARD' } }));
    expect(timer).toHaveLength(1);
    template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: Match.objectLike({ FOLLOW_UP_TIMER_ARN: { Ref: logicalId(stack.followUpTimer) }, FOLLOW_UP_DELAY_SECONDS: '172800' }) },
    });
    template.hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: { Statement: Match.arrayWith([Match.objectLike({ Action: 'states:StartExecution', Resource: { Ref: logicalId(stack.followUpTimer) } })]) },
    });
    const definition = JSON.stringify(timer[0]!.Properties.DefinitionString);
    expect(definition).toContain('\\"TimestampPath\\":\\"$.dueAt\\"');
    expect(definition).toContain('\\"DetailType\\":\\"follow_up.due\\"');
  });
});

describe('the app', () => {
  it('has the lifecycle stack in every environment, cdk-nag clean', () => {
    for (const env of ['dev', 'prod']) {
      const whole = new App({ context: { env, 'aws:cdk:bundling-stacks': [] } });
      const stacks = buildStepwiseApp(whole, getEnvConfig(env));
      expect(stacks.leadLifecycle.stackName).toBe(`Stepwise-LeadLifecycle-${env}`);
      const findings = new AwsSolutionsChecks()
        .validateScope(stacks.leadLifecycle)
        .violations.flatMap((v) => v.violatingResources.map((r) => `${v.severity} ${v.ruleName}: ${r.constructPath ?? r.resourceLogicalId}`));
      expect(findings).toEqual([]);
    }
  });

  it('notifies its own alarm topic (each stack has one) from every lifecycle alarm where there is one', () => {
    const whole = new App({ context: { env: 'prod', 'aws:cdk:bundling-stacks': [] } });
    const { leadLifecycle } = buildStepwiseApp(whole, getEnvConfig('prod'));
    const alarms = Object.values(Template.fromStack(leadLifecycle).findResources('AWS::CloudWatch::Alarm'));
    expect(alarms).toHaveLength(6); // 4 dead-letter queues + failed lifecycle executions + failed follow-up timers
    expect(alarms.filter((a) => a.Properties.MetricName === 'ExecutionsFailed')).toHaveLength(2);
    const topics = Object.keys(Template.fromStack(leadLifecycle).findResources('AWS::SNS::Topic'));
    expect(topics).toHaveLength(1);
    for (const alarm of alarms) expect(alarm.Properties.AlarmActions).toEqual([{ Ref: topics[0] }]);
  });

  it('the dev stack alone is cdk-nag clean', () => {
    expect(new AwsSolutionsChecks().validateScope(app).violations.map((v) => v.ruleName)).toEqual([]);
  });
});
