/**
 * CDK assertions on the fixture lifecycle's stack (member-journey): the compiled Express state machine, the bus, rules, dead-letter queues,
 * alarms, dashboard, grants, cdk-nag.
 */
import { createRequire } from 'node:module';
import { App } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { describe, expect, it } from 'vitest';
import { loadStateName } from '../../src/cdk/constructs/lifecycle-workflow.ts';
import { LIFECYCLE_STATES as S } from '../../src/cdk/names.ts';
import { OUTBOX_FILTER } from '../../src/cdk/stacks/lifecycle-stack.ts';
import { addStepwiseStacks } from '../../src/cdk/stepwise-app.ts';
import { ConfigError } from '../../src/core/errors.ts';
import { routeOf, UNKNOWN_EVENT } from '../../src/definitions/lifecycle/routes.ts';
import { LIFECYCLE_SOURCE } from '../../src/definitions/lifecycle/schema.ts';
import { loadProject } from '../../src/project/project.ts';
import { FOLLOW_UP_DUE, stateChangedType } from '../../src/runtime/lifecycle/envelope.ts';
import { OUTBOX_SK_PREFIX } from '../../src/runtime/lifecycle/store.ts';
import { type Json, lifecycleApp, lifecycleStack } from '../local/sessions/lifecycle/support.ts';
import { agent, def } from '../runtime/lifecycle/support.ts';
import { FIXTURE_PROJECT, fixtureEnv } from '../support/fixture-project.ts';
import { synthApp } from './template.ts';

const project = await loadProject(FIXTURE_PROJECT);

const validateAsl = createRequire(import.meta.url)('asl-validator') as (
  d: unknown,
  o?: { checkArn?: boolean; checkPaths?: boolean },
) => { isValid: boolean; errorsText: () => string };

const LOAD = loadStateName(def);
const STATE_CHANGED = stateChangedType(def);
const { app, stack } = lifecycleStack();
const template = Template.fromStack(stack);
const asl = lifecycleApp().app.stateMachines.find((m) => m.workflowName === def.name)!.definition as unknown as {
  StartAt: string;
  States: Record<string, Json>;
};
const logicalId = (construct: { node: { defaultChild?: unknown } }) =>
  stack.getLogicalId(construct.node.defaultChild as never);

/** Evaluate a Choice rule (the operators the compiler emits) against the state the routing Choice sees. */
function holds(rule: Json, input: Json): boolean {
  if (rule.And) return rule.And.every((r: Json) => holds(r, input));
  if (rule.Or) return rule.Or.some((r: Json) => holds(r, input));
  const value = (rule.Variable as string)
    .split('.')
    .slice(1)
    .reduce((v: any, k) => v?.[k], input);
  if ('StringEquals' in rule) return value === rule.StringEquals;
  if ('BooleanEquals' in rule) return value === rule.BooleanEquals;
  throw new Error(`unexpected Choice rule ${JSON.stringify(rule)}`);
}

/** The first state that is not a Choice `Route event` leads to, for an event of `type`. */
function routed(type: string, duplicate = false): string {
  const input = { loaded: { event: { type }, duplicate } };
  let name: string = S.route;
  while (asl.States[name]!.Type === 'Choice') {
    const choice = asl.States[name]!;
    const matching = (choice.Choices as Json[]).filter((r) => holds(r, input));
    expect(matching.length, `${type} matches ${matching.length} rules of ${name}`).toBeLessThanOrEqual(
      duplicate ? 2 : 1,
    );
    name = matching[0]?.Next ?? choice.Default;
  }
  return name;
}

describe('the lifecycle state machine', () => {
  it('is an Express state machine with full logging and X-Ray, tagged with its lifecycle', () => {
    const [resource] = Object.values(
      template.findResources('AWS::StepFunctions::StateMachine', { Properties: { StateMachineType: 'EXPRESS' } }),
    );
    expect(resource!.Metadata).toEqual({ 'stepwise:workflow': 'member-journey' });
    expect(resource!.Properties).toMatchObject({
      TracingConfiguration: { Enabled: true },
      LoggingConfiguration: { Level: 'ALL', IncludeExecutionData: true },
    });
  });

  it('is valid ASL', () => {
    const result = validateAsl(asl, { checkArn: false, checkPaths: true });
    expect(result.isValid, result.errorsText()).toBe(true);
  });

  it('routes every event to the Task of its type, duplicates first, a type outside the vocabulary to Unknown event', () => {
    for (const type of [...def.events, 'member.sneezed', 'constructor']) {
      expect(routed(type), type).toBe(routeOf(def, type));
      expect(routed(type, true)).toBe(S.duplicate);
    }
    expect(routed('member.sneezed')).toBe(UNKNOWN_EVENT);
    const route = asl.States[S.route]!;
    expect(route.Choices).toEqual([
      { Variable: '$.loaded.duplicate', BooleanEquals: true, Next: S.duplicate },
      ...def.events.map((type) => ({ Variable: '$.loaded.event.type', StringEquals: type, Next: type })),
    ]);
    expect(route.Default).toBe(UNKNOWN_EVENT);
  });

  it('reads in the console: a name from the stack and the lifecycle, few states, and a Comment on every state', () => {
    const [resource] = Object.values(template.findResources('AWS::StepFunctions::StateMachine'));
    expect(resource!.Properties.StateMachineName).toBe('Stepwise-MemberJourney-dev-member-journey');
    // One Task per event type (14), Unknown event, and 9 others: 24 states.
    expect(Object.keys(asl.States)).toHaveLength(def.events.length + 10);
    expect(
      Object.keys(asl.States)
        .filter((name) => asl.States[name]!.Type === 'Choice')
        .sort(),
    ).toEqual([S.afterPersist, S.retryConflict, S.route].sort());
    for (const [name, state] of Object.entries(asl.States)) expect(state.Comment, name).toMatch(/\w/);
    expect(asl.States['call.missed']!.Comment).toBe('Applies call.missed: booked → no_show; elsewhere logged only.');
    expect(asl.States[LOAD]!.Comment).toMatch(/Refuses an event over 240 KiB or without detail\.memberId/);
  });

  it('has no unreachable state', () => {
    const reached = new Set<string>();
    const visit = (name: string | undefined): void => {
      if (!name || reached.has(name)) return;
      reached.add(name);
      const state = asl.States[name]!;
      for (const next of [
        state.Next,
        state.Default,
        ...(state.Choices ?? []).map((r: Json) => r.Next),
        ...(state.Catch ?? []).map((c: Json) => c.Next),
      ])
        visit(next);
    };
    visit(asl.StartAt);
    expect([...reached].sort()).toEqual(Object.keys(asl.States).sort());
  });

  it('has one transition Task per event type, each applying with the pure function under its own name, then Persist', () => {
    const applyFn = asl.States[UNKNOWN_EVENT]!.Resource;
    const tasks = Object.entries(asl.States).filter(([, s]) => s.Resource === applyFn);
    expect(tasks.map(([name]) => name).sort()).toEqual([...def.events, UNKNOWN_EVENT].sort());
    for (const [name, state] of tasks) {
      // The event is read from the execution input: the state never holds its detail twice.
      expect(state.Parameters).toEqual({
        route: name,
        'envelope.$': '$$.Execution.Input',
        'entity.$': '$.loaded.entity',
      });
      expect(state).toMatchObject({
        ResultPath: '$.applied',
        Next: S.persist,
        Catch: [{ ErrorEquals: ['States.ALL'], Next: S.deadLetter, ResultPath: '$.error' }],
      });
      expect(name.length).toBeLessThanOrEqual(80);
    }
  });

  it('re-reads after a version conflict a bounded number of times, refuses an oversize event, and dead-letters whatever fails', () => {
    expect(asl.StartAt).toBe(LOAD);
    // No Parameters: the first pass hands the load Task the execution input exactly.
    expect(asl.States[LOAD]!.Parameters).toBeUndefined();
    expect(asl.States[LOAD]!.Catch).toEqual([
      { ErrorEquals: ['EventTooLargeError'], ResultPath: '$.detail', Next: S.deadLetter },
      { ErrorEquals: ['States.ALL'], ResultPath: '$.error', Next: S.deadLetter },
    ]);
    expect(asl.States[S.persist]!.Catch).toEqual([
      { ErrorEquals: ['VersionConflictError'], ResultPath: '$.error', Next: S.retryConflict },
      { ErrorEquals: ['States.ALL'], ResultPath: '$.error', Next: S.deadLetter },
    ]);
    // The execution id makes a retried Persist the same store request (answered as committed, so the change is published).
    expect(asl.States[S.persist]!.Parameters).toMatchObject({
      'requestId.$': '$$.Execution.Id',
      'envelope.$': '$$.Execution.Input',
    });
    expect(asl.States[S.retryConflict]).toMatchObject({
      Choices: [{ Variable: '$.loaded.attempt', NumericLessThan: 10, Next: LOAD }],
      Default: S.deadLetter,
    });
    expect(asl.States[S.deadLetter]).toMatchObject({
      Resource: 'arn:aws:states:::sqs:sendMessage',
      Parameters: { 'MessageBody.$': '$' },
      Next: S.failed,
    });
    for (const [name, state] of Object.entries(asl.States).filter(
      ([, s]) => s.Type === 'Task' && s.Resource !== 'arn:aws:states:::sqs:sendMessage',
    )) {
      expect(state.Catch?.at(-1), name).toEqual({
        ErrorEquals: ['States.ALL'],
        ResultPath: '$.error',
        Next: S.deadLetter,
      });
    }
  });

  it('publishes nothing itself: Persist writes member.state_changed to the outbox in the same transaction', () => {
    expect(asl.States[S.persist]!.Parameters).toMatchObject({ 'stateChanged.$': '$.applied.stateChanged' });
    expect(asl.States[S.afterPersist]).toMatchObject({
      Choices: [{ Variable: '$.persisted.status', StringEquals: 'DUPLICATE', Next: S.duplicate }],
      Default: S.done,
    });
    expect(Object.values(asl.States).filter((st) => st.Resource === 'arn:aws:states:::events:putEvents')).toEqual([]);
  });

  it('grants each Task only what it does: the load Task reads, Persist writes, the transition function touches nothing', () => {
    const statementsOf = (fnId: string) => {
      const roleId = template.toJSON().Resources[fnId].Properties.Role['Fn::GetAtt'][0];
      return Object.values(template.findResources('AWS::IAM::Policy'))
        .filter((p) => p.Properties.Roles.some((r: Json) => r.Ref === roleId))
        .flatMap((p) => p.Properties.PolicyDocument.Statement as Json[])
        .flatMap((s) => [s.Action].flat() as string[]);
    };
    const { load, apply, persist } = stack.lifecycle.functions;
    expect(statementsOf(logicalId(apply)).filter((a) => !a.startsWith('logs:') && !a.startsWith('xray:'))).toEqual([]);
    expect(statementsOf(logicalId(load))).toEqual(
      expect.arrayContaining(['dynamodb:BatchGetItem', 'dynamodb:GetItem', 'dynamodb:Query']),
    );
    expect(statementsOf(logicalId(load))).not.toContain('dynamodb:PutItem');
    expect(statementsOf(logicalId(persist))).toEqual(expect.arrayContaining(['dynamodb:PutItem']));
    expect(statementsOf(logicalId(persist))).not.toContain('dynamodb:GetItem');
    template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: {
        Variables: Match.objectLike({
          LIFECYCLE: 'member-journey',
          AGENT_CONFIG: JSON.stringify(agent('attend-call')),
        }),
      },
    });
  });
});

describe('the lifecycle bus and its rules', () => {
  const rules = template.findResources('AWS::Events::Rule');
  const ruleOf = (construct: { node: { defaultChild?: unknown } }) => rules[logicalId(construct)]!.Properties;

  it('is a custom bus named per lifecycle and environment', () => {
    template.hasResourceProperties('AWS::Events::EventBus', { Name: 'stepwise-dev-member-journey' });
    expect(Object.values(rules).every((r) => r.Properties.EventBusName.Ref === logicalId(stack.eventBus))).toBe(true);
  });

  it('routes every event from the CRM, the agent, the replay and the timers to the lifecycle state machine, entity id or not', () => {
    expect(def.sources).toEqual(['stepwise.crm', 'stepwise.agent', 'stepwise.replay', 'stepwise.scheduler']);
    expect(ruleOf(stack.incomingRule)).toMatchObject({
      EventPattern: { source: def.sources },
      Targets: [
        {
          Arn: { Ref: logicalId(stack.lifecycle.stateMachine) },
          RetryPolicy: { MaximumRetryAttempts: 8, MaximumEventAgeInSeconds: 86400 },
        },
      ],
    });
    expect(def.sources).not.toContain(LIFECYCLE_SOURCE); // what the lifecycle publishes never loops back into it
  });

  it('queues, with an alarm, every event from any other source than its own and the lifecycle itself', () => {
    const unknown = Object.values(rules).find(
      (r) => r.Properties.Targets[0].Arn['Fn::GetAtt']?.[0] === logicalId(stack.unknownSourceEvents),
    )!.Properties;
    expect(unknown.EventPattern).toEqual({ source: [{ 'anything-but': [...def.sources, LIFECYCLE_SOURCE] }] });
  });

  it('feeds member.state_changed to the CRM sync, the notifier (notify states only) and the timers, follow_up.due to the follow-up sender', () => {
    expect(STATE_CHANGED).toBe('member.state_changed');
    const pattern = { source: [LIFECYCLE_SOURCE], 'detail-type': [STATE_CHANGED] };
    const { crmSync, notifier, timers, followUpSender } = stack.listeners;
    expect(ruleOf(crmSync!.rule).EventPattern).toEqual(pattern);
    expect(ruleOf(timers!.rule).EventPattern).toEqual(pattern);
    expect(ruleOf(notifier!.rule).EventPattern).toEqual({ ...pattern, detail: { to: def.features.notify!.states } });
    expect(ruleOf(followUpSender!.rule).EventPattern).toEqual({
      source: [LIFECYCLE_SOURCE],
      'detail-type': [FOLLOW_UP_DUE],
    });
    for (const listener of [crmSync!, notifier!, timers!, followUpSender!]) {
      expect(ruleOf(listener.rule).Targets).toEqual([
        expect.objectContaining({ Arn: { 'Fn::GetAtt': [logicalId(listener.function), 'Arn'] } }),
      ]);
    }
  });

  it('gives every target a dead-letter queue and a retry policy, and every Lambda listener an on-failure destination', () => {
    const targets = Object.values(rules).flatMap((r) => r.Properties.Targets as Json[]);
    expect(targets).toHaveLength(6);
    for (const target of targets) {
      expect(target.DeadLetterConfig?.Arn?.['Fn::GetAtt']?.[1]).toBe('Arn');
      expect(target.RetryPolicy.MaximumRetryAttempts).toBeGreaterThan(0);
    }
    for (const listener of Object.values(stack.listeners)) {
      template.hasResourceProperties('AWS::Lambda::EventInvokeConfig', {
        FunctionName: { Ref: logicalId(listener.function) },
        DestinationConfig: {
          OnFailure: { Destination: { 'Fn::GetAtt': [logicalId(listener.deadLetterQueue), 'Arn'] } },
        },
      });
    }
  });

  it('encrypts every queue and alarms as soon as anything lands in one', () => {
    const queues = template.findResources('AWS::SQS::Queue');
    expect(Object.keys(queues)).toHaveLength(8); // incoming, unknown sources, 4 listeners, outbox pipe, timers
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

  it('gives the event store a NEW_IMAGE stream and a TTL for outbox items', () => {
    template.hasResourceProperties('AWS::DynamoDB::Table', {
      StreamSpecification: { StreamViewType: 'NEW_IMAGE' },
      TimeToLiveSpecification: { AttributeName: 'expiresAt', Enabled: true },
    });
  });

  it('is one pipe: table stream (new outbox items only, from the oldest record) -> publisher -> the bus as member.state_changed, with retries, bisection and a DLQ', () => {
    expect(pipe).toHaveLength(1);
    const p = pipe[0]!.Properties;
    expect(p.Source).toEqual({ 'Fn::GetAtt': [logicalId(stack.table), 'StreamArn'] });
    expect(p.Enrichment).toEqual({ 'Fn::GetAtt': [logicalId(stack.outbox.publisher), 'Arn'] });
    expect(p.Target).toEqual({ 'Fn::GetAtt': [logicalId(stack.eventBus), 'Arn'] });
    expect(p.TargetParameters).toEqual({
      EventBridgeEventBusParameters: { DetailType: STATE_CHANGED, Source: LIFECYCLE_SOURCE },
    });
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
    expect(resources[roleId]!.Properties.AssumeRolePolicyDocument.Statement[0].Principal).toEqual({
      Service: 'pipes.amazonaws.com',
    });
    const actions = Object.values(template.findResources('AWS::IAM::Policy'))
      .filter((pol) => pol.Properties.Roles.some((r: Json) => r.Ref === roleId))
      .flatMap((pol) => pol.Properties.PolicyDocument.Statement as Json[])
      .flatMap((st) => [st.Action].flat() as string[]);
    expect(new Set(actions)).toEqual(
      new Set([
        'dynamodb:DescribeStream',
        'dynamodb:GetRecords',
        'dynamodb:GetShardIterator',
        'dynamodb:ListStreams',
        'lambda:InvokeFunction',
        'events:PutEvents',
        'sqs:SendMessage',
        'sqs:GetQueueAttributes',
        'sqs:GetQueueUrl',
      ]),
    );
  });
});

describe('the timers on EventBridge Scheduler (the followUps and renewals features)', () => {
  const resources = template.toJSON().Resources as Record<string, Json>;

  it('has a schedule group per environment and no Step Functions timer any more', () => {
    template.hasResourceProperties('AWS::Scheduler::ScheduleGroup', { Name: 'stepwise-dev-member-journey-timers' });
    expect(Object.values(template.findResources('AWS::StepFunctions::StateMachine'))).toHaveLength(1);
  });

  it("gives schedules a role Scheduler assumes for this group's schedules only, allowed to put on the bus and to dead-letter", () => {
    const role = resources[logicalId(stack.timers!.role)]!.Properties;
    expect(role.AssumeRolePolicyDocument.Statement[0]).toMatchObject({
      Principal: { Service: 'scheduler.amazonaws.com' },
      Condition: {
        StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } },
        ArnLike: { 'aws:SourceArn': expect.anything() },
      },
    });
    expect(JSON.stringify(role.AssumeRolePolicyDocument)).toContain(':schedule/stepwise-dev-member-journey-timers/*');
    const actions = Object.values(template.findResources('AWS::IAM::Policy'))
      .filter((pol) => pol.Properties.Roles.some((r: Json) => r.Ref === logicalId(stack.timers!.role)))
      .flatMap((pol) => pol.Properties.PolicyDocument.Statement as Json[])
      .flatMap((st) => [st.Action].flat() as string[]);
    expect(new Set(actions)).toEqual(
      new Set(['events:PutEvents', 'sqs:SendMessage', 'sqs:GetQueueAttributes', 'sqs:GetQueueUrl']),
    );
  });

  it('lets the timers listener and the follow-up sender manage schedules in the group and pass the delivery role, with the agent timers in their environment', () => {
    for (const fn of [stack.listeners.timers!.function, stack.listeners.followUpSender!.function]) {
      const vars = resources[logicalId(fn)]!.Properties.Environment.Variables;
      expect(vars).toMatchObject({
        LIFECYCLE: 'member-journey',
        SCHEDULE_GROUP: 'stepwise-dev-member-journey-timers',
        SCHEDULER_ROLE_ARN: { 'Fn::GetAtt': [logicalId(stack.timers!.role), 'Arn'] },
        TIMERS_DLQ_ARN: { 'Fn::GetAtt': [logicalId(stack.timers!.deadLetterQueue), 'Arn'] },
        AGENT_CONFIG: JSON.stringify(agent('attend-call')),
      });
      const roleId = resources[logicalId(fn)]!.Properties.Role['Fn::GetAtt'][0];
      const actions = Object.values(template.findResources('AWS::IAM::Policy'))
        .filter((pol) => pol.Properties.Roles.some((r: Json) => r.Ref === roleId))
        .flatMap((pol) => pol.Properties.PolicyDocument.Statement as Json[])
        .flatMap((st) => [st.Action].flat() as string[]);
      expect(actions).toEqual(
        expect.arrayContaining([
          'scheduler:CreateSchedule',
          'scheduler:UpdateSchedule',
          'scheduler:DeleteSchedule',
          'scheduler:GetSchedule',
          'iam:PassRole',
        ]),
      );
    }
    expect(
      JSON.parse(resources[logicalId(stack.listeners.timers!.function)]!.Properties.Environment.Variables.AGENT_CONFIG)
        .timers,
    ).toEqual({
      followUpHours: [48, 72],
      coldAfterDays: 7,
      renewalAfterDays: null,
    });
  });
});

describe('operations', () => {
  it('has a dashboard of executions, events, dead letters and functions, and alarms on every function, timed-out and failed executions', () => {
    template.hasResourceProperties('AWS::CloudWatch::Dashboard', { DashboardName: 'stepwise-member-journey-dev' });
    const body = JSON.stringify(template.findResources('AWS::CloudWatch::Dashboard'));
    for (const title of [
      'Executions',
      'member events',
      'Dead-letter queues',
      'Function errors',
      'Function throttles',
      'Alarms',
    ])
      expect(body).toContain(title);
    const functions = Object.keys(template.findResources('AWS::Lambda::Function'));
    expect(functions).toHaveLength(8); // load, apply, persist, outbox publisher, 4 listeners
    for (const fn of functions) {
      for (const metric of ['Errors', 'Throttles']) {
        template.hasResourceProperties('AWS::CloudWatch::Alarm', {
          MetricName: metric,
          Namespace: 'AWS/Lambda',
          Dimensions: [{ Name: 'FunctionName', Value: { Ref: fn } }],
          Threshold: 1,
        });
      }
    }
    for (const metric of ['ExecutionsTimedOut', 'ExecutionsFailed'])
      template.hasResourceProperties('AWS::CloudWatch::Alarm', { MetricName: metric, Namespace: 'AWS/States' });
  });
});

describe('the app', () => {
  it('has the lifecycle stack in every environment, cdk-nag clean', () => {
    for (const env of ['dev', 'prod']) {
      const member = synthApp(env).stacks.lifecycles['member-journey']!;
      expect(member.stackName).toBe(`Stepwise-MemberJourney-${env}`);
      const findings = new AwsSolutionsChecks()
        .validateScope(member)
        .violations.flatMap((v) =>
          v.violatingResources.map((r) => `${v.severity} ${v.ruleName}: ${r.constructPath ?? r.resourceLogicalId}`),
        );
      expect(findings).toEqual([]);
    }
  });

  it('notifies its own alarm topic (each stack has one) from every lifecycle alarm where there is one', () => {
    const member = synthApp('prod').stacks.lifecycles['member-journey']!;
    const alarms = Object.values(Template.fromStack(member).findResources('AWS::CloudWatch::Alarm'));
    expect(alarms).toHaveLength(26); // 8 queues, failed and timed-out executions, errors and throttles of 8 functions
    expect(alarms.filter((a) => a.Properties.MetricName === 'ExecutionsFailed')).toHaveLength(1);
    const topics = Object.keys(Template.fromStack(member).findResources('AWS::SNS::Topic'));
    expect(topics).toHaveLength(1);
    for (const alarm of alarms) expect(alarm.Properties.AlarmActions).toEqual([{ Ref: topics[0] }]);
  });

  it('refuses, in one line naming the field, settings a feature needs and does not get, and settings for no lifecycle', () => {
    const dev = fixtureEnv('dev');
    const build = (lifecycles: typeof dev.lifecycles) => () =>
      addStepwiseStacks(
        new App({ context: { 'aws:cdk:bundling-stacks': [] } }),
        { ...dev, lifecycles },
        { ...project, workflows: [] },
      );
    expect(build({})).toThrow(
      new ConfigError(
        `environment "dev": lifecycles.member-journey.crmWebhookUrl: required by features.crmSync of ${def.file}`,
      ),
    );
    expect(build({ ...dev.lifecycles, 'member-journy': {} })).toThrow(
      /^environment "dev": lifecycles\.member-journy: no lifecycle "member-journy" \(known: member-journey\)$/,
    );
    expect(build({ 'member-journey': { ...dev.lifecycles['member-journey'], agent: 'nobody' } })).toThrow(
      /unknown agent "nobody"/,
    );
  });

  it('the dev stack alone is cdk-nag clean', () => {
    expect(new AwsSolutionsChecks().validateScope(app).violations.map((v) => v.ruleName)).toEqual([]);
  });
});
