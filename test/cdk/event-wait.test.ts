/**
 * An event step compiled: a key check, a `lambda:invoke.waitForTaskToken` Task whose timeout is
 * the step's deadline and whose `States.Timeout` goes to the declared route; a token table with
 * TTL; a rule on the awaited source and detail-type targeting the resumer, which may only use its
 * token table and send task success or failure to this state machine. Valid ASL, clean cdk-nag.
 */
import { createRequire } from 'node:module';
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { describe, expect, it } from 'vitest';
import { synthesize } from '../../src/local/cloud/synth.ts';
import { addEventWorkflow, EVENT_STACK, EVENT_WORKFLOW } from '../fixtures/event-workflow.ts';
import type { Json } from './template.ts';

const validateAsl = createRequire(import.meta.url)('asl-validator') as (definition: unknown) => {
  isValid: boolean;
  errorsText: (separator?: string) => string;
};

const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
const workflow = addEventWorkflow(app);
const template = Template.fromStack(Stack.of(workflow));
const asl = synthesize((a) => void addEventWorkflow(a)).stateMachines.find(
  (sm) => sm.name === `${EVENT_STACK}-${EVENT_WORKFLOW}`,
)!.definition as Json;
const resources = template.toJSON().Resources as Record<string, Json>;
const logicalId = (construct: { node: { defaultChild?: unknown } }) =>
  Stack.of(workflow).getLogicalId(construct.node.defaultChild as never);

describe('event step compiled', () => {
  it('is valid ASL and has no unacknowledged cdk-nag finding', () => {
    const result = validateAsl(asl);
    expect(result.errorsText('\n')).toBe('');
    expect(result.isValid).toBe(true);
    const report = new AwsSolutionsChecks().validateScope(workflow);
    expect(report.violations.map((v) => v.ruleName)).toEqual([]);
  });

  it('checks the key, then waits for the token with the deadline as timeout; a timeout takes the declared route', () => {
    const states = asl.States;
    expect(states['01-await-payment.key']).toMatchObject({
      Type: 'Choice',
      Choices: [{ Variable: '$.input.orderId', IsPresent: true, Next: '01-await-payment.wait-event' }],
      Default: '01-await-payment.no-key',
    });
    expect(states['01-await-payment.no-key']).toMatchObject({
      Result: { Error: 'MissingCorrelationKey' },
      Next: '99-hand-off',
    });
    const wait = states['01-await-payment.wait-event'];
    expect(wait).toMatchObject({
      Type: 'Task',
      Resource: 'arn:aws:states:::lambda:invoke.waitForTaskToken',
      TimeoutSeconds: 259200,
      ResultSelector: { 'payment.$': '$' },
      ResultPath: '$.result.fields',
      Next: '01-await-payment',
      Parameters: {
        Payload: {
          'taskToken.$': '$$.Task.Token',
          'key.$': '$.input.orderId',
          match: 'order.id',
          source: 'shop.payments',
          detailType: 'PaymentReceived',
          timeoutSeconds: 259200,
        },
      },
    });
    expect(wait.Catch).toEqual([
      { ErrorEquals: ['States.Timeout'], ResultPath: '$.error', Next: '03-chase' },
      { ErrorEquals: ['States.ALL'], ResultPath: '$.error', Next: '99-hand-off' },
    ]);
    expect(states['01-await-payment']).toMatchObject({ Type: 'Pass', Next: '01-await-payment.route' });
  });

  it('keeps tokens in a table that expires them, and routes the awaited events to the resumer', () => {
    const table = resources[logicalId(workflow.eventWaits!.table)]!;
    expect(table.Properties.TimeToLiveSpecification).toEqual({ AttributeName: 'expiresAt', Enabled: true });
    const resumer = logicalId(workflow.eventWaits!.resumer!);
    template.hasResourceProperties('AWS::Events::Rule', {
      EventPattern: { source: ['shop.payments'], 'detail-type': ['PaymentReceived'] },
      Targets: [{ Arn: { 'Fn::GetAtt': [resumer, 'Arn'] } }],
    });
    const env = resources[resumer]!.Properties.Environment.Variables;
    expect(JSON.parse(env.EVENT_WAITS)).toEqual([
      {
        workflow: EVENT_WORKFLOW,
        step: '01-await-payment',
        source: 'shop.payments',
        detailType: 'PaymentReceived',
        match: 'order.id',
      },
    ]);
  });

  it('lets the resumer use its token table and send task results to this state machine, nothing else', () => {
    const resumerRole = resources[logicalId(workflow.eventWaits!.resumer!)]!.Properties.Role['Fn::GetAtt'][0];
    const statements = Object.values(resources)
      .filter((r) => r.Type === 'AWS::IAM::Policy' && r.Properties.Roles.some((x: Json) => x.Ref === resumerRole))
      .flatMap((p) => p.Properties.PolicyDocument.Statement as Json[]);
    const table = logicalId(workflow.eventWaits!.table);
    const machine = logicalId(workflow.stateMachine);
    for (const s of statements) {
      const actions = [s.Action].flat() as string[];
      const targets = JSON.stringify(s.Resource);
      if (actions.some((a) => a.startsWith('states:'))) {
        expect(actions.sort()).toEqual(['states:SendTaskFailure', 'states:SendTaskSuccess']);
        expect(s.Resource).toEqual({ Ref: machine });
      } else if (actions.some((a) => a.startsWith('dynamodb:'))) expect(targets).toContain(table);
      else expect(actions.every((a) => a.startsWith('logs:') || a.startsWith('xray:'))).toBe(true);
    }
    expect(statements.some((s) => [s.Action].flat().includes('states:SendTaskSuccess'))).toBe(true);
  });
});
