/** The SES ingress as deployed: receipt rule, raw-mail bucket, least-privilege function, failure queue and alarm. */
import { AwsSolutionsChecks } from 'cdk-nag';
import { describe, expect, it } from 'vitest';
import { INBOUND_PREFIX } from '../../../../src/cdk/constructs/email-ingress.ts';
import { actionsOf, type Json, statementsOfFunction, synthApp } from '../../../cdk/template.ts';
import { fixtureEnv } from '../../../support/fixture-project.ts';

const { app, stacks, template } = synthApp('dev');
const config = fixtureEnv('dev');
const desk = stacks.workflows['case-desk']!;
// The fixture project's case-desk declares an email trigger (and a single-prompt agent): its stack has the ingress.
const ingress = desk.ingress!;
const id = (construct: { node: { defaultChild?: unknown } }) => desk.getLogicalId(construct.node.defaultChild as never);
const fnId = id(ingress.function);
const bucketId = id(ingress.bucket);
const queueId = id(ingress.failedDeliveries);
const tableId = (prefix: string) =>
  Object.keys(template.findResources('AWS::DynamoDB::Table')).find((t) => t.startsWith(prefix))!;
const machineId = Object.entries(template.findResources('AWS::StepFunctions::StateMachine')).find(
  ([, m]) => m.Metadata?.['stepwise:workflow'],
)![0];
const statements = statementsOfFunction(template, fnId);

describe('EmailIngress', () => {
  it('receives mail for the configured recipients with scanning on: first into S3, then the ingress function', () => {
    const rules = Object.values(template.findResources('AWS::SES::ReceiptRule'));
    expect(rules).toHaveLength(1);
    expect(rules[0]!.Properties.Rule).toMatchObject({
      Enabled: true,
      Recipients: config.email!.recipients,
      ScanEnabled: true,
      TlsPolicy: 'Require',
      Actions: [
        { S3Action: { BucketName: { Ref: bucketId }, ObjectKeyPrefix: INBOUND_PREFIX } },
        { LambdaAction: { FunctionArn: { 'Fn::GetAtt': [fnId, 'Arn'] }, InvocationType: 'Event' } },
      ],
    });
    template.resourceCountIs('AWS::SES::ReceiptRuleSet', 1);
    template.hasResourceProperties('AWS::Lambda::Permission', {
      Action: 'lambda:InvokeFunction',
      FunctionName: { 'Fn::GetAtt': [fnId, 'Arn'] },
      Principal: 'ses.amazonaws.com',
    });
    template.hasOutput('*', {
      Value: {
        'Fn::Join': ['', ['aws ses set-active-receipt-rule-set --rule-set-name ', { Ref: id(ingress.ruleSet) }]],
      },
    });
  });

  it('keeps raw mail in an encrypted, private, SSL-only bucket that expires it', () => {
    template.hasResourceProperties('AWS::S3::Bucket', {
      BucketEncryption: {
        ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }],
      },
      PublicAccessBlockConfiguration: {
        BlockPublicAcls: true,
        BlockPublicPolicy: true,
        IgnorePublicAcls: true,
        RestrictPublicBuckets: true,
      },
      LifecycleConfiguration: { Rules: [{ Prefix: INBOUND_PREFIX, ExpirationInDays: 30, Status: 'Enabled' }] },
    });
    const policy = Object.values(template.findResources('AWS::S3::BucketPolicy')).find(
      (p) => p.Properties.Bucket.Ref === bucketId,
    )!;
    const policyStatements: Json[] = policy.Properties.PolicyDocument.Statement;
    expect(policyStatements).toContainEqual(
      expect.objectContaining({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
    );
    const sesPut = policyStatements.find((s) => s.Principal?.Service === 'ses.amazonaws.com')!;
    expect(actionsOf(sesPut)).toEqual(['s3:PutObject']);
    expect(JSON.stringify(sesPut.Resource)).toContain(`/${INBOUND_PREFIX}*`);
  });

  it('runs src/runtime/triggers/email/handler.ts with its bucket, tables, state machine and limits in the environment', () => {
    const fn = template.findResources('AWS::Lambda::Function')[fnId]!;
    expect(fn.Metadata['stepwise:entry']).toBe('runtime/triggers/email/handler.ts');
    expect(fn.Properties.Environment.Variables).toMatchObject({
      EMAIL_BUCKET: { Ref: bucketId },
      EMAIL_KEY_PREFIX: INBOUND_PREFIX,
      STATE_MACHINE_ARN: { Ref: machineId },
      EMAILS_TABLE: { Ref: tableId('EmailsTable') },
      EVENTS_TABLE: { Ref: tableId('EventsTable') },
      MAIL_FROM: config.email!.mailFrom,
      MAX_MESSAGE_BYTES: String(config.email!.maxEmailBytes),
    });
  });

  it('grants the function exactly: read raw mail, write emails and events, start the workflow or (dual mode) its single-prompt agent, read the switch', () => {
    const granted = (action: string) =>
      statements.filter((s) => actionsOf(s).includes(action)).map((s) => JSON.stringify(s.Resource));
    const singlePromptId = Object.keys(template.findResources('AWS::StepFunctions::StateMachine')).find(
      (m) => m !== machineId,
    )!;
    expect(granted('states:StartExecution')).toEqual([
      JSON.stringify({ Ref: machineId }),
      JSON.stringify({ Ref: singlePromptId }),
    ]);
    expect(statements.flatMap(actionsOf).filter((a) => a.startsWith('ssm:'))).toEqual(
      expect.arrayContaining(['ssm:GetParameter']),
    );
    expect(
      statements
        .flatMap(actionsOf)
        .filter(
          (a) =>
            a.startsWith('ssm:') &&
            !/^ssm:(GetParameter|GetParameters|DescribeParameters|GetParameterHistory)$/.test(a),
        ),
    ).toEqual([]);
    expect(statements.flatMap(actionsOf).filter((a) => a.startsWith('s3:'))).toEqual(['s3:GetObject']);
    expect(granted('s3:GetObject')).toEqual([
      JSON.stringify({ 'Fn::Join': ['', [{ 'Fn::GetAtt': [bucketId, 'Arn'] }, `/${INBOUND_PREFIX}*`]] }),
    ]);
    const tablesWritten = statements
      .filter((s) => actionsOf(s).includes('dynamodb:PutItem'))
      .flatMap((s) => [s.Resource].flat())
      .map((r: Json) => r['Fn::GetAtt']?.[0])
      .filter(Boolean)
      .sort();
    expect(tablesWritten).toEqual([tableId('EmailsTable'), tableId('EventsTable')].sort());
    expect(statements.some((s) => actionsOf(s).includes('dynamodb:GetItem'))).toBe(false);
    expect(statements.flatMap(actionsOf).filter((a) => /^(ses|bedrock|lambda):/.test(a))).toEqual([]);
  });

  it('sends deliveries that still fail after two retries to an encrypted queue, and alarms on it', () => {
    template.hasResourceProperties('AWS::Lambda::EventInvokeConfig', {
      FunctionName: { Ref: fnId },
      MaximumRetryAttempts: 2,
      DestinationConfig: { OnFailure: { Destination: { 'Fn::GetAtt': [queueId, 'Arn'] } } },
    });
    expect(statements.filter((s) => actionsOf(s).includes('sqs:SendMessage')).map((s) => s.Resource)).toEqual([
      { 'Fn::GetAtt': [queueId, 'Arn'] },
    ]);
    template.hasResourceProperties('AWS::SQS::Queue', { SqsManagedSseEnabled: true });
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [queueId, 'QueueName'] } }],
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
    });
  });

  it('notifies the alarm topic in environments that have one', () => {
    const prod = synthApp('prod');
    const topicId = Object.keys(prod.template.findResources('AWS::SNS::Topic'))[0]!;
    prod.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'ApproximateNumberOfMessagesVisible',
      AlarmActions: [{ Ref: topicId }],
    });
    const prodStack = prod.stacks.workflows['case-desk']!;
    expect(
      prod.template.findResources('AWS::S3::Bucket')[
        prodStack.getLogicalId(prodStack.ingress!.bucket.node.defaultChild as never)
      ]!.DeletionPolicy,
    ).toBe('Retain');
  });

  it('has no unacknowledged cdk-nag AwsSolutions finding', () => {
    const findings = new AwsSolutionsChecks()
      .validateScope(app)
      .violations.flatMap((v) =>
        v.violatingResources.map((r) => `${v.ruleName}: ${r.constructPath ?? r.resourceLogicalId}`),
      )
      .filter((f) => f.includes('EmailIngress'));
    expect(findings).toEqual([]);
  });
});
