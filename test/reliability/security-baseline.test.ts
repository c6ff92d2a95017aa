/**
 * The security baseline of every stack the app builds (one per workflow folder, and the lead
 * lifecycle), in dev and prod: cdk-nag AwsSolutions with zero unacknowledged findings, tables
 * encrypted with point-in-time recovery, buckets blocking public access and refusing plain HTTP,
 * every log group with a retention (and every function logging to one of them), an alarm on
 * failed executions of every state machine and on the depth of every queue (each is a
 * dead-letter queue). Checked on the synthesized templates by `baselineProblems`, which is itself
 * shown to catch each omission.
 */
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { describe, expect, it } from 'vitest';
import { synthApp } from '../examples/support/app.ts';
import { allStacks, type Json } from '../support/app.ts';
import { recordFigure } from './figures.ts';

const refersTo = (value: unknown, logicalId: string) => JSON.stringify(value ?? null).includes(`"${logicalId}"`);

/** What a synthesized stack misses of the baseline, one line per problem (empty: it meets it). */
function baselineProblems(template: Json): string[] {
  const resources = Object.entries<Json>(template.Resources ?? {});
  const of = (type: string) => resources.filter(([, r]) => r.Type === type);
  const problems: string[] = [];
  for (const [id, table] of of('AWS::DynamoDB::Table')) {
    if (table.Properties?.SSESpecification?.SSEEnabled !== true)
      problems.push(`${id}: table without server-side encryption with KMS (SSESpecification)`);
    if (table.Properties?.PointInTimeRecoverySpecification?.PointInTimeRecoveryEnabled !== true)
      problems.push(`${id}: table without point-in-time recovery`);
  }
  for (const [id, bucket] of of('AWS::S3::Bucket')) {
    const block = bucket.Properties?.PublicAccessBlockConfiguration ?? {};
    if (
      !['BlockPublicAcls', 'BlockPublicPolicy', 'IgnorePublicAcls', 'RestrictPublicBuckets'].every(
        (k) => block[k] === true,
      )
    )
      problems.push(`${id}: bucket does not block public access`);
    const tlsOnly = of('AWS::S3::BucketPolicy').some(
      ([, p]) =>
        refersTo(p.Properties?.Bucket, id) &&
        (p.Properties?.PolicyDocument?.Statement ?? []).some(
          (s: Json) => s.Effect === 'Deny' && s.Condition?.Bool?.['aws:SecureTransport'] === 'false',
        ),
    );
    if (!tlsOnly) problems.push(`${id}: bucket accepts requests without TLS`);
  }
  for (const [id, group] of of('AWS::Logs::LogGroup'))
    if (group.Properties?.RetentionInDays === undefined) problems.push(`${id}: log group kept forever`);
  for (const [id, fn] of of('AWS::Lambda::Function')) {
    const group = fn.Properties?.LoggingConfig?.LogGroup;
    if (!group || !of('AWS::Logs::LogGroup').some(([gid]) => refersTo(group, gid)))
      problems.push(`${id}: function logs to an implicit log group (no retention)`);
  }
  const alarms = of('AWS::CloudWatch::Alarm').map(([, a]) => a.Properties ?? {});
  for (const [id] of of('AWS::StepFunctions::StateMachine'))
    if (!alarms.some((a) => a.MetricName === 'ExecutionsFailed' && refersTo(a.Dimensions, id)))
      problems.push(`${id}: no alarm on failed executions`);
  for (const [id] of of('AWS::SQS::Queue'))
    if (!alarms.some((a) => a.MetricName === 'ApproximateNumberOfMessagesVisible' && refersTo(a.Dimensions, id)))
      problems.push(`${id}: no alarm on the queue's depth`);
  return problems;
}

describe.each(['dev', 'prod'])('the %s app', (env) => {
  const { stacks } = synthApp(env);
  const all = Object.entries(allStacks(stacks));

  it('has a workflow stack per workflow folder and a lifecycle stack per lifecycle folder', () => {
    expect(all.map(([name]) => name)).toEqual(expect.arrayContaining(['warranty-email', 'lead-lifecycle']));
  });

  it.each(all.map(([name]) => name))('%s: cdk-nag AwsSolutions has no unacknowledged finding', (name) => {
    const stack = all.find(([n]) => n === name)![1];
    const findings = new AwsSolutionsChecks()
      .validateScope(stack)
      .violations.flatMap((v) =>
        v.violatingResources.map((r) => `${v.severity} ${v.ruleName}: ${r.constructPath ?? r.resourceLogicalId}`),
      );
    expect(findings).toEqual([]);
  });

  it.each(all.map(([name]) => name))('%s: encryption, PITR, public access, TLS, log retention and alarms', (name) => {
    const template = Template.fromStack(all.find(([n]) => n === name)![1]).toJSON();
    expect(baselineProblems(template)).toEqual([]);
    if (env === 'prod')
      recordFigure(`security baseline (${name})`, `${Object.keys(template.Resources).length} resources, 0 findings`);
  });
});

describe('baselineProblems', () => {
  it('names every omission of a stack that ignores the baseline', () => {
    const stack = new Stack(new App(), 'Careless');
    new dynamodb.CfnTable(stack, 'Table', {
      keySchema: [{ attributeName: 'pk', keyType: 'HASH' }],
      attributeDefinitions: [{ attributeName: 'pk', attributeType: 'S' }],
      billingMode: 'PAY_PER_REQUEST',
    });
    new s3.Bucket(stack, 'Bucket', { blockPublicAccess: s3.BlockPublicAccess.BLOCK_ACLS });
    new logs.LogGroup(stack, 'Logs', { retention: logs.RetentionDays.INFINITE });
    new sqs.Queue(stack, 'DeadLetters');
    new sfn.StateMachine(stack, 'Machine', {
      definitionBody: sfn.DefinitionBody.fromChainable(new sfn.Pass(stack, 'P')),
    });
    const problems = baselineProblems(Template.fromStack(stack).toJSON());
    expect(problems.map((p) => p.replace(/^\w+: /, ''))).toEqual([
      'table without server-side encryption with KMS (SSESpecification)',
      'table without point-in-time recovery',
      'bucket does not block public access',
      'bucket accepts requests without TLS',
      'log group kept forever',
      'no alarm on failed executions',
      "no alarm on the queue's depth",
    ]);
  });
});
