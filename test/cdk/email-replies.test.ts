/**
 * The email ingress of a workflow that waits for the customer's reply: it may put events on the
 * reply bus only (no other bus, no other action) and query the emails table for thread items only;
 * without a reply step it gets neither. cdk-nag stays clean.
 */
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { describe, expect, it } from 'vitest';
import { EmailIngress } from '../../src/cdk/constructs/email-ingress.ts';
import { fixtureEnv } from '../support/fixture-project.ts';
import { actionsOf, type Json, statementsOfFunction } from './template.ts';

function ingressStack(replyBus?: string) {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const stack = new Stack(app, 'Replies', { env: { account: '123456789012', region: 'us-east-1' } });
  const table = (id: string) =>
    new dynamodb.Table(stack, id, {
      partitionKey: { name: 'pk', type: dynamodb.AttributeType.STRING },
      sortKey: { name: 'sk', type: dynamodb.AttributeType.STRING },
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
    });
  const emailsTable = table('Emails');
  const ingress = new EmailIngress(stack, 'EmailIngress', {
    config: fixtureEnv('dev'),
    stateMachine: sfn.StateMachine.fromStateMachineName(stack, 'Machine', 'reply-wait'),
    workflowName: 'reply-wait',
    emailsTable,
    eventsTable: table('Events'),
    ...(replyBus && { replyBus }),
  });
  const template = Template.fromStack(stack);
  const fn = stack.getLogicalId(ingress.function.node.defaultChild as never);
  return { ingress, template, emailsTable: stack.getLogicalId(emailsTable.node.defaultChild as never), fn };
}

describe('EmailIngress of a workflow that waits for replies', () => {
  const { ingress, template, emailsTable, fn } = ingressStack('support-bus');
  const statements = statementsOfFunction(template, fn);

  it('may put events on the reply bus only, which its environment names', () => {
    const puts = statements.filter((s) => actionsOf(s).some((a) => a.startsWith('events:')));
    expect(puts).toHaveLength(1);
    expect(actionsOf(puts[0]!)).toEqual(['events:PutEvents']);
    expect(JSON.stringify(puts[0]!.Resource)).toContain(':event-bus/support-bus');
    expect(JSON.stringify(puts[0]!.Resource)).not.toContain('*');
    const vars = template.findResources('AWS::Lambda::Function')[fn]!.Properties.Environment.Variables as Json;
    expect(vars.REPLY_EVENT_BUS).toBe('support-bus');
  });

  it('may query the emails table for thread items only, and read nothing else', () => {
    const queries = statements.filter((s) => actionsOf(s).includes('dynamodb:Query'));
    expect(queries).toEqual([
      {
        Action: 'dynamodb:Query',
        Effect: 'Allow',
        Resource: { 'Fn::GetAtt': [emailsTable, 'Arn'] },
        Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['THREAD#*'] } },
      },
    ]);
    expect(statements.flatMap(actionsOf).filter((a) => /^dynamodb:(GetItem|Scan|BatchGetItem)$/.test(a))).toEqual([]);
  });

  it('has no unacknowledged cdk-nag AwsSolutions finding', () => {
    const findings = new AwsSolutionsChecks()
      .validateScope(ingress)
      .violations.flatMap((v) => v.violatingResources.map((r) => `${v.ruleName}: ${r.resourceLogicalId}`));
    expect(findings).toEqual([]);
  });
});

describe('EmailIngress of a workflow that waits for no reply', () => {
  it('gets no bus and no read of the emails table', () => {
    const { template, fn } = ingressStack();
    const actions = statementsOfFunction(template, fn).flatMap(actionsOf);
    expect(actions.filter((a) => a.startsWith('events:') || a === 'dynamodb:Query')).toEqual([]);
    const vars = template.findResources('AWS::Lambda::Function')[fn]!.Properties.Environment.Variables as Json;
    expect(vars.REPLY_EVENT_BUS).toBeUndefined();
  });
});
