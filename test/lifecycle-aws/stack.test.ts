/** CDK assertions on the lead lifecycle stack: the compiled Express state machine, the bus, rules, dead-letter queues, alarms, grants, cdk-nag. */
import { createRequire } from 'node:module';
import { App } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { describe, expect, it } from 'vitest';
import { loadProject } from '../../infra/project.ts';
import { addStepwiseStacks } from '../../infra/stepwise-app.ts';
import { eventRouteName, LIFECYCLE_STATES as S, transitionRules } from '../../infra/constructs/lifecycle-workflow.ts';
import { FOLLOW_UP_DUE, LEAD_EVENT_SOURCES, LIFECYCLE_SOURCE, STATE_CHANGED } from '../../lambdas/lifecycle/envelope.ts';
import { OUTBOX_SK_PREFIX } from '../../lambdas/lifecycle/store.ts';
import { OUTBOX_FILTER } from '../../infra/stacks/lead-lifecycle-stack.ts';
import { loadAgentConfig, loadLifecycle } from '../../lambdas/lifecycle/loader.ts';
import { LOG_ONLY, routeOf } from '../../lambdas/lifecycle/routes.ts';
import { LEAD_EVENT_TYPES } from '../../lambdas/lifecycle/schema.ts';
import { NOTIFY_STATES } from '../../lambdas/lifecycle/state-changes.ts';
import { lifecycleApp, lifecycleStack, type Json } from './support.ts';
import { exampleEnv } from '../support/config.ts';

const project = await loadProject();

const validateAsl = createRequire(import.meta.url)('asl-validator') as (d: unknown, o?: { checkArn?: boolean; checkPaths?: boolean }) => { isValid: boolean; errorsText: () => string };

const def = loadLifecycle();
const { app, stack } = lifecycleStack();
const template = Template.fromStack(stack);
const asl = lifecycleApp().app.stateMachines.find((m) => m.workflowName === 'lead-lifecycle')!.definition as unknown as { StartAt: string; States: Record<string, Json> };
const logicalId = (construct: { node: { defaultChild?: unknown } }) => stack.getLogicalId(construct.node.defaultChild as never);

/** Evaluate a Choice rule (the operators the compiler emits) against the state the routing Choices see. */
function holds(rule: Json, input: Json): boolean {
  if (rule.And) return rule.And.every((r: Json) => holds(r, input));
  if (rule.Or) return rule.Or.some((r: Json) => holds(r, input));
  const value = (rule.Variable as string).split('.').slice(1).reduce((v: any, k) => v?.[k], input);
  if ('StringEquals' in rule) return value === rule.StringEquals;
  if ('BooleanEquals' in rule) return value === rule.BooleanEquals;
  throw new Error(`unexpected Choice rule ${JSON.stringify(rule)}`);
}

/** The first state that is not a Choice `RouteEvent` leads to, for a lead in `leaf` and an event of `type`. */
function routed(leaf: string, type: string, duplicate = false): string {
  const input = { loaded: { event: { type }, lead: { state: leaf }, duplicate } };
  let name: string = S.route;
  while (asl.States[name]!.Type === 'Choice') {
    const choice = asl.States[name]!;
    const matching = (choice.Choices as Json[]).filter((r) => holds(r, input));
    expect(matching.length, `${leaf} + ${type} matches ${matching.length} rules of ${name}`).toBeLessThanOrEqual(duplicate && name === S.route ? 2 : 1);
    name = matching[0]?.Next ?? choice.Default;
  }
  return name;
}

/** The paths a Choice rule reads. */
const variables = (rule: Json): string[] => (rule.And ?? rule.Or)?.flatMap(variables) ?? [rule.Variable];

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

  it('routes in two levels, so an event costs a lookup per event type and per leaf, not per declaration: RouteEvent on the event type, then a Choice per event type on the lead state', () => {
    const route = asl.States[S.route]!;
    const events = [...new Set([...transitionRules(def).values()].map((rule) => rule.event))];
    expect(route.Choices).toEqual([
      { Variable: '$.loaded.duplicate', BooleanEquals: true, Next: S.duplicate },
      ...events.map((type) => ({ Variable: '$.loaded.event.type', StringEquals: type, Next: eventRouteName(type) })),
    ]);
    expect(route.Default).toBe(LOG_ONLY);
    for (const type of events) {
      const name = eventRouteName(type);
      const choice = asl.States[name]!;
      expect(name.length).toBeLessThanOrEqual(80);
      expect(choice).toMatchObject({ Type: 'Choice', Default: LOG_ONLY });
      expect(new Set((choice.Choices as Json[]).flatMap(variables)), name).toEqual(new Set(['$.loaded.lead.state']));
    }
    const choices = Object.keys(asl.States).filter((name) => asl.States[name]!.Type === 'Choice');
    expect(choices.sort()).toEqual([S.route, S.retryConflict, S.afterPersist, ...events.map(eventRouteName)].sort());
  });

  it('has no unreachable state', () => {
    const reached = new Set<string>();
    const visit = (name: string | undefined): void => {
      if (!name || reached.has(name)) return;
      reached.add(name);
      const state = asl.States[name]!;
      for (const next of [state.Next, state.Default, ...(state.Choices ?? []).map((r: Json) => r.Next), ...(state.Catch ?? []).map((c: Json) => c.Next)]) visit(next);
    };
    visit(asl.StartAt);
    expect([...reached].sort()).toEqual(Object.keys(asl.States).sort());
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

  it('publishes nothing itself: Persist writes lead.state_changed to the outbox in the same transaction', () => {
    expect(asl.States[S.persist]!.Parameters).toMatchObject({ 'stateChanged.$': '$.applied.stateChanged' });
    expect(asl.States[S.afterPersist]).toMatchObject({ Choices: [{ Variable: '$.persisted.status', StringEquals: 'DUPLICATE', Next: S.duplicate }], Default: S.done });
    expect(Object.values(asl.States).filter((st) => st.Resource === 'arn:aws:states:::events:putEvents')).toEqual([]);
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
    expect(statementsOf(logicalId(loadLead))).toEqual(expect.arrayContaining(['dynamodb:BatchGetItem', 'dynamodb:GetItem', 'dynamodb:Query']));
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

  it('routes CRM, agent, replayed and timer events about a lead to the lifecycle state machine', () => {
    expect(ruleOf(stack.incomingRule)).toMatchObject({
      EventPattern: { source: [...LEAD_EVENT_SOURCES], detail: { leadId: [{ exists: true }] } },
      Targets: [{ Arn: { Ref: logicalId(stack.lifecycle.stateMachine) }, RetryPolicy: { MaximumRetryAttempts: 8, MaximumEventAgeInSeconds: 86400 } }],
    });
  });

  it('feeds lead.state_changed to the CRM sync, the notifier (notify states only) and the timers, follow_up.due to the follow-up sender', () => {
    const pattern = { source: [LIFECYCLE_SOURCE], 'detail-type': [STATE_CHANGED] };
    const { crmSync, notifier, timers, followUpSender } = stack.listeners;
    expect(ruleOf(crmSync.rule).EventPattern).toEqual(pattern);
    expect(ruleOf(timers.rule).EventPattern).toEqual(pattern);
    expect(ruleOf(notifier.rule).EventPattern).toEqual({ ...pattern, detail: { to: [...NOTIFY_STATES] } });
    expect(ruleOf(followUpSender.rule).EventPattern).toEqual({ source: [LIFECYCLE_SOURCE], 'detail-type': [FOLLOW_UP_DUE] });
    for (const listener of [crmSync, notifier, timers, followUpSender]) {
      expect(ruleOf(listener.rule).Targets).toEqual([expect.objectContaining({ Arn: { 'Fn::GetAtt': [logicalId(listener.function), 'Arn'] } })]);
    }
    expect(LEAD_EVENT_SOURCES).not.toContain(LIFECYCLE_SOURCE); // what the lifecycle publishes never loops back into it
  });

  it('gives every target a dead-letter queue and a retry policy, and every Lambda listener an on-failure destination', () => {
    const targets = Object.values(rules).flatMap((r) => r.Properties.Targets as Json[]);
    expect(targets).toHaveLength(5);
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
    expect(Object.keys(queues)).toHaveLength(7); // incoming, 4 listeners, outbox pipe, timers
    for (const [id, queue] of Object.entries(queues)) {
      expect(queue.Properties.SqsManagedSseEnabled).toBe(true);
      template.hasResourceProperties('AWS::CloudWatch::Alarm', {
        MetricName: 'ApproximateNumberOfMessagesVisible',
        Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [id, 'QueueName'] } }],
        Threshold: 1,
      });
    }
  });

});

describe('the transactional outbox', () => {
  const resources = template.toJSON().Resources as Record<string, Json>;
  const pipe = Object.values(template.findResources('AWS::Pipes::Pipe'));

  it('gives the leads table a NEW_IMAGE stream and a TTL for outbox items', () => {
    template.hasResourceProperties('AWS::DynamoDB::Table', {
      StreamSpecification: { StreamViewType: 'NEW_IMAGE' },
      TimeToLiveSpecification: { AttributeName: 'expiresAt', Enabled: true },
    });
  });

  it('is one pipe: table stream (new outbox items only, from the oldest record) -> publisher -> leads bus as lead.state_changed, with retries, bisection and a DLQ', () => {
    expect(pipe).toHaveLength(1);
    const p = pipe[0]!.Properties;
    expect(p.Source).toEqual({ 'Fn::GetAtt': [logicalId(stack.leadsTable), 'StreamArn'] });
    expect(p.Enrichment).toEqual({ 'Fn::GetAtt': [logicalId(stack.outbox.publisher), 'Arn'] });
    expect(p.Target).toEqual({ 'Fn::GetAtt': [logicalId(stack.eventBus), 'Arn'] });
    expect(p.TargetParameters).toEqual({ EventBridgeEventBusParameters: { DetailType: STATE_CHANGED, Source: LIFECYCLE_SOURCE } });
    expect(p.SourceParameters.DynamoDBStreamParameters).toEqual({
      StartingPosition: 'TRIM_HORIZON',
      BatchSize: 10,
      MaximumRetryAttempts: 10,
      MaximumRecordAgeInSeconds: -1,
      OnPartialBatchItemFailure: 'AUTOMATIC_BISECT',
      DeadLetterConfig: { Arn: { 'Fn::GetAtt': [logicalId(stack.outbox.deadLetterQueue), 'Arn'] } },
    });
    expect(p.SourceParameters.FilterCriteria.Filters.map((f: Json) => JSON.parse(f.Pattern))).toEqual([OUTBOX_FILTER]);
    expect(OUTBOX_FILTER.dynamodb.NewImage.sk.S[0].prefix).toBe(OUTBOX_SK_PREFIX);
  });

  it("lets the pipe's role read the stream, invoke the publisher, put on the bus and dead-letter, nothing else", () => {
    const roleId = logicalId(stack.outbox.role);
    expect(resources[roleId]!.Properties.AssumeRolePolicyDocument.Statement[0].Principal).toEqual({ Service: 'pipes.amazonaws.com' });
    const actions = Object.values(template.findResources('AWS::IAM::Policy'))
      .filter((pol) => pol.Properties.Roles.some((r: Json) => r.Ref === roleId))
      .flatMap((pol) => pol.Properties.PolicyDocument.Statement as Json[])
      .flatMap((st) => [st.Action].flat() as string[]);
    expect(new Set(actions)).toEqual(
      new Set(['dynamodb:DescribeStream', 'dynamodb:GetRecords', 'dynamodb:GetShardIterator', 'dynamodb:ListStreams', 'lambda:InvokeFunction', 'events:PutEvents', 'sqs:SendMessage', 'sqs:GetQueueAttributes', 'sqs:GetQueueUrl']),
    );
  });
});

describe('the lead timers on EventBridge Scheduler', () => {
  const resources = template.toJSON().Resources as Record<string, Json>;

  it('has a schedule group per environment and no Step Functions timer any more', () => {
    template.hasResourceProperties('AWS::Scheduler::ScheduleGroup', { Name: 'stepwise-dev-lead-timers' });
    expect(Object.values(template.findResources('AWS::StepFunctions::StateMachine'))).toHaveLength(1);
  });

  it("gives schedules a role Scheduler assumes for this group's schedules only, allowed to put on the bus and to dead-letter", () => {
    const role = resources[logicalId(stack.timers.role)]!.Properties;
    expect(role.AssumeRolePolicyDocument.Statement[0]).toMatchObject({
      Principal: { Service: 'scheduler.amazonaws.com' },
      Condition: { StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } }, ArnLike: { 'aws:SourceArn': expect.anything() } },
    });
    expect(JSON.stringify(role.AssumeRolePolicyDocument)).toContain(':schedule/stepwise-dev-lead-timers/*');
    const actions = Object.values(template.findResources('AWS::IAM::Policy'))
      .filter((pol) => pol.Properties.Roles.some((r: Json) => r.Ref === logicalId(stack.timers.role)))
      .flatMap((pol) => pol.Properties.PolicyDocument.Statement as Json[])
      .flatMap((st) => [st.Action].flat() as string[]);
    expect(new Set(actions)).toEqual(new Set(['events:PutEvents', 'sqs:SendMessage', 'sqs:GetQueueAttributes', 'sqs:GetQueueUrl']));
  });

  it('lets the timers listener and the follow-up sender manage schedules in the group and pass the delivery role, with the agent timers in their environment', () => {
    for (const fn of [stack.listeners.timers.function, stack.listeners.followUpSender.function]) {
      const vars = resources[logicalId(fn)]!.Properties.Environment.Variables;
      expect(vars).toMatchObject({
        SCHEDULE_GROUP: 'stepwise-dev-lead-timers',
        SCHEDULER_ROLE_ARN: { 'Fn::GetAtt': [logicalId(stack.timers.role), 'Arn'] },
        TIMERS_DLQ_ARN: { 'Fn::GetAtt': [logicalId(stack.timers.deadLetterQueue), 'Arn'] },
        AGENT_CONFIG: JSON.stringify(loadAgentConfig('book-meeting')),
      });
      const roleId = resources[logicalId(fn)]!.Properties.Role['Fn::GetAtt'][0];
      const actions = Object.values(template.findResources('AWS::IAM::Policy'))
        .filter((pol) => pol.Properties.Roles.some((r: Json) => r.Ref === roleId))
        .flatMap((pol) => pol.Properties.PolicyDocument.Statement as Json[])
        .flatMap((st) => [st.Action].flat() as string[]);
      expect(actions).toEqual(expect.arrayContaining(['scheduler:CreateSchedule', 'scheduler:UpdateSchedule', 'scheduler:DeleteSchedule', 'scheduler:GetSchedule', 'iam:PassRole']));
    }
    expect(JSON.parse(resources[logicalId(stack.listeners.timers.function)]!.Properties.Environment.Variables.AGENT_CONFIG).timers).toEqual({
      followUpHours: [48, 72, 120],
      coldAfterDays: 7,
      renewalAfterDays: null,
    });
  });
});

describe('the app', () => {
  it('has the lifecycle stack in every environment, cdk-nag clean', () => {
    for (const env of ['dev', 'prod']) {
      const whole = new App({ context: { env, 'aws:cdk:bundling-stacks': [] } });
      const stacks = addStepwiseStacks(whole, exampleEnv(env), project);
      expect(stacks.lifecycles['lead-lifecycle']!.stackName).toBe(`Stepwise-LeadLifecycle-${env}`);
      const findings = new AwsSolutionsChecks()
        .validateScope(stacks.lifecycles['lead-lifecycle']!)
        .violations.flatMap((v) => v.violatingResources.map((r) => `${v.severity} ${v.ruleName}: ${r.constructPath ?? r.resourceLogicalId}`));
      expect(findings).toEqual([]);
    }
  });

  it('notifies its own alarm topic (each stack has one) from every lifecycle alarm where there is one', () => {
    const whole = new App({ context: { env: 'prod', 'aws:cdk:bundling-stacks': [] } });
    const { lifecycles: { 'lead-lifecycle': leadLifecycle } } = addStepwiseStacks(whole, exampleEnv('prod'), project);
    const alarms = Object.values(Template.fromStack(leadLifecycle).findResources('AWS::CloudWatch::Alarm'));
    expect(alarms).toHaveLength(8); // 7 dead-letter queues + failed lifecycle executions
    expect(alarms.filter((a) => a.Properties.MetricName === 'ExecutionsFailed')).toHaveLength(1);
    const topics = Object.keys(Template.fromStack(leadLifecycle).findResources('AWS::SNS::Topic'));
    expect(topics).toHaveLength(1);
    for (const alarm of alarms) expect(alarm.Properties.AlarmActions).toEqual([{ Ref: topics[0] }]);
  });

  it('the dev stack alone is cdk-nag clean', () => {
    expect(new AwsSolutionsChecks().validateScope(app).violations.map((v) => v.ruleName)).toEqual([]);
  });
});
