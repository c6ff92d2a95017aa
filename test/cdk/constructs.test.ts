/**
 * The construct steps compiled: a map step to an inline Map, a parallel step to a Parallel state,
 * a wait step to a Wait state, a workflow step to `startExecution.sync:2` with the state machine
 * role granted exactly the child; every definition valid ASL, every workflow clean under cdk-nag.
 */
import { createRequire } from 'node:module';
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { describe, expect, it } from 'vitest';
import { synthesize } from '../../src/local/cloud/synth.ts';
import { addConstructWorkflows, CONSTRUCT_WORKFLOWS, CONSTRUCTS_STACK } from '../fixtures/construct-workflows.ts';
import { actionsOf, type Json } from './template.ts';

// asl-validator ships no type declarations.
const validateAsl = createRequire(import.meta.url)('asl-validator') as (definition: unknown) => {
  isValid: boolean;
  errorsText: (separator?: string) => string;
};

const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
const workflows = addConstructWorkflows(app);
const stack = Stack.of(workflows['fan-out']!);
const template = Template.fromStack(stack);
const synthesized = synthesize(addConstructWorkflows);
/** Each workflow's definition, tokens resolved as the local runtime resolves them. */
const asl = Object.fromEntries(
  CONSTRUCT_WORKFLOWS.map((name) => [
    name,
    synthesized.stateMachines.find((sm) => sm.name === `${CONSTRUCTS_STACK}-${name}`)!.definition as Json,
  ]),
);

describe('construct steps compiled', () => {
  it.each(CONSTRUCT_WORKFLOWS)('%s: valid ASL, and no unacknowledged cdk-nag finding', (name) => {
    const result = validateAsl(asl[name]);
    expect(result.errorsText('\n')).toBe('');
    expect(result.isValid).toBe(true);
    const report = new AwsSolutionsChecks().validateScope(workflows[name]!);
    expect(report.violations.map((v) => v.ruleName)).toEqual([]);
  });

  it('map: refuses too many items, then an inline Map over the array, bounded, whose items end done or failed, then the join', () => {
    const states = asl['fan-out']!.States;
    expect(states['01-classify-all.items']).toMatchObject({
      Type: 'Choice',
      Choices: [{ Variable: '$.input.attachments[120]', IsPresent: true, Next: '01-classify-all.too-many' }],
      Default: '01-classify-all.map',
    });
    const map = states['01-classify-all.map'];
    expect(map).toMatchObject({
      Type: 'Map',
      ItemsPath: '$.input.attachments',
      MaxConcurrency: 4,
      ResultPath: '$.result.fields',
      ResultSelector: { 'classifications.$': '$' },
      Next: '01-classify-all',
    });
    const item = map.ItemProcessor ?? map.Iterator;
    expect(item.StartAt).toBe('01-classify-all.item');
    expect(Object.keys(item.States).sort()).toEqual(
      [
        '01-classify-all.item',
        '02-classify',
        '02-classify.route',
        '01-classify-all.item.done',
        '01-classify-all.item.failed',
        '01-classify-all.item.max-steps',
        '01-classify-all.item.route-rejected',
      ].sort(),
    );
    expect(item.States['02-classify'].Catch).toEqual([
      { ErrorEquals: ['States.ALL'], ResultPath: '$.error', Next: '01-classify-all.item.failed' },
    ]);
    expect(states['01-classify-all']).toMatchObject({ Type: 'Task', Next: '01-classify-all.route' });
    expect(map.Catch[0].Next).toBe('99-hand-off');
    expect(states['01-classify-all.too-many'].Next).toBe('99-hand-off');
  });

  it('parallel: one branch per chain, the results by branch name, then the join; a failure goes to the fallback', () => {
    const parallel = asl.lookups!.States['01-look-up.branches'];
    expect(parallel).toMatchObject({
      Type: 'Parallel',
      ResultSelector: { 'customer.$': '$[0]', 'order.$': '$[1]' },
      ResultPath: '$.result.fields',
      Next: '01-look-up',
    });
    expect(parallel.Branches.map((b: Json) => b.StartAt)).toEqual(['01-look-up.customer', '01-look-up.order']);
    expect(Object.keys(parallel.Branches[1].States)).toEqual(expect.arrayContaining(['03-order', '05-shipment']));
    expect(parallel.Catch[0].Next).toBe('99-hand-off');
    expect(asl.lookups!.States['01-look-up'].Catch[0].Next).toBe('99-hand-off');
  });

  it('wait: a Wait state of Seconds, or of TimestampPath after a check, then the step result', () => {
    const states = asl.reminder!.States;
    expect(states['01-three-days.wait']).toMatchObject({ Type: 'Wait', Seconds: 259200, Next: '01-three-days' });
    expect(states['02-until.check'].Choices[0]).toMatchObject({ Variable: '$.input.remindAt', IsTimestamp: true });
    expect(states['02-until.wait']).toMatchObject({ Type: 'Wait', TimestampPath: '$.input.remindAt' });
    expect(states['01-three-days']).toMatchObject({
      Type: 'Pass',
      ResultPath: '$.result',
      Next: '01-three-days.route',
    });
  });

  it('workflow: startExecution.sync:2 on the child, linked to the parent, with no function of its own', () => {
    const task = asl['parent-call']!.States['01-open-ticket'];
    expect(task.Resource).toBe('arn:aws:states:::states:startExecution.sync:2');
    expect(task.Parameters.StateMachineArn).toBe(
      `arn:aws:states:us-east-1:123456789012:stateMachine:${CONSTRUCTS_STACK}-child-ticket`,
    );
    expect(task.Parameters.Input).toEqual({
      'subject.$': '$.input.subject',
      'AWS_STEP_FUNCTIONS_STARTED_BY_EXECUTION_ID.$': '$$.Execution.Id',
    });
    expect(Object.keys(workflows['parent-call']!.functions).sort()).toEqual(['02-reply', '99-hand-off']);
    expect(Object.keys(workflows.reminder!.functions).sort()).toEqual(['03-remind', '99-hand-off']);
  });

  it("workflow: the parent's role may start exactly the child, see its executions, and manage the .sync rule; no other state machine", () => {
    const machine = stack.getLogicalId(workflows['parent-call']!.stateMachine.node.defaultChild as never);
    const roleId = template.findResources('AWS::StepFunctions::StateMachine')[machine]!.Properties.RoleArn[
      'Fn::GetAtt'
    ][0];
    const statements = Object.values(template.findResources('AWS::IAM::Policy'))
      .filter((p) => (p.Properties.Roles as Json[]).some((r) => r.Ref === roleId))
      .flatMap((p) => p.Properties.PolicyDocument.Statement as Json[]);
    const text = (v: unknown) => JSON.stringify(v);
    const start = statements.filter((s) => actionsOf(s).includes('states:StartExecution'));
    expect(start).toHaveLength(1);
    expect(text(start[0]!.Resource)).toContain(`stateMachine:${CONSTRUCTS_STACK}-child-ticket`);
    expect(text(start[0]!.Resource)).not.toContain('*');
    const describe = statements.find((s) => actionsOf(s).includes('states:DescribeExecution'))!;
    expect(text(describe.Resource)).toContain(`execution:${CONSTRUCTS_STACK}-child-ticket*`);
    const rule = statements.find((s) => actionsOf(s).includes('events:PutRule'))!;
    expect(actionsOf(rule).sort()).toEqual(['events:DescribeRule', 'events:PutRule', 'events:PutTargets']);
    expect(text(rule.Resource)).toContain('rule/StepFunctionsGetEventsForStepFunctionsExecutionRule');
    // Only the parent starts executions: no other workflow's role may.
    const starters = Object.values(template.findResources('AWS::IAM::Policy')).filter((p) =>
      (p.Properties.PolicyDocument.Statement as Json[]).some((s) => actionsOf(s).includes('states:StartExecution')),
    );
    expect(starters).toHaveLength(1);
  });
});
