/**
 * What a deployment tells its on-call engineer, on the synthesized templates of the workflow stacks
 * (the email ingress included): an alarm on the errors and the throttles of every function, on
 * timed-out executions and on Bedrock throttling, and on mail refused unread; every alarm notifies
 * the topic of any environment that configures an alarm email or an SNS topic; server access logs
 * on the raw-mail bucket where the config asks for them (prod).
 */
import { App, type Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { metricsNamespace } from '../../src/cdk/constructs/stepwise-function.ts';
import { EMAIL_INGRESS_ENTRY } from '../../src/cdk/names.ts';
import { addStepwiseStacks } from '../../src/cdk/stepwise-app.ts';
import { type EnvConfig, EnvConfigSchema } from '../../src/project/config.ts';
import { loadProject } from '../../src/project/project.ts';
import { FIXTURE_PROJECT, fixtureEnv } from '../support/fixture-project.ts';
import { type Json, synthApp } from './template.ts';

const TOPIC = 'arn:aws:sns:eu-west-1:123456789012:on-call';
const project = await loadProject(FIXTURE_PROJECT);
const ENV_NAMES = Object.keys(project.config.environments);

/** The workflow stacks of `config`'s app, by workflow name. */
function workflowTemplates(config: EnvConfig): Record<string, Template> {
  const { workflows } = addStepwiseStacks(
    new App({ context: { env: config.name, 'aws:cdk:bundling-stacks': [] } }),
    config,
    project,
  );
  return Object.fromEntries(
    Object.entries(workflows).map(([name, stack]: [string, Stack]) => [name, Template.fromStack(stack)]),
  );
}

const alarmsOf = (template: Template): Json[] =>
  Object.values(template.findResources('AWS::CloudWatch::Alarm')).map((a) => a.Properties);
/** The alarms whose metric (or one metric of whose math) is `metricName` with these dimensions. */
const watching = (template: Template, metricName: string, dimension: (d: Json[]) => boolean) =>
  alarmsOf(template).filter(
    (a) =>
      (a.MetricName === metricName && dimension(a.Dimensions ?? [])) ||
      (a.Metrics ?? []).some(
        (m: Json) => m.MetricStat?.Metric?.MetricName === metricName && dimension(m.MetricStat.Metric.Dimensions ?? []),
      ),
  );
const refersTo = (dims: Json[], logicalId: string) => JSON.stringify(dims).includes(`"${logicalId}"`);

describe('alarms of the workflow stacks', () => {
  const { stacks, template } = synthApp('dev');
  const config = fixtureEnv('dev');
  const functions = Object.entries(template.findResources('AWS::Lambda::Function')).filter(
    ([, fn]) => fn.Metadata?.['stepwise:entry'],
  );

  it('alarm on the errors and the throttles of every step function and the ingress, at the configured thresholds', () => {
    expect(functions.map(([, fn]) => fn.Metadata['stepwise:entry'])).toContain(EMAIL_INGRESS_ENTRY);
    for (const [id] of functions) {
      const errors = watching(template, 'Errors', (d) => refersTo(d, id));
      const throttles = watching(template, 'Throttles', (d) => refersTo(d, id));
      expect(
        errors.map((a) => [a.Namespace, a.Statistic, a.Period, a.Threshold]),
        id,
      ).toEqual([['AWS/Lambda', 'Sum', 300, config.alarms.functionErrorsThreshold]]);
      expect(
        throttles.map((a) => [a.Namespace, a.Threshold]),
        id,
      ).toEqual([['AWS/Lambda', config.alarms.throttlesThreshold]]);
    }
  });

  it('alarms on timed-out executions of every workflow', () => {
    for (const [name, stack] of Object.entries(stacks.workflows)) {
      const t = Template.fromStack(stack);
      const [machine] = Object.keys(t.findResources('AWS::StepFunctions::StateMachine'));
      expect(
        watching(t, 'ExecutionsTimedOut', (d) => refersTo(d, machine!)).map((a) => a.Threshold),
        name,
      ).toEqual([config.alarms.failedExecutionsThreshold]);
    }
  });

  it('alarms on Bedrock throttling, watching exactly the metric the step handler emits when the model throttles', () => {
    // test/runtime/observability/step-metrics.test.ts: ModelThrottled, dimensions service and workflow (the workflow's
    // name both).
    const name = 'case-desk';
    const alarms = watching(
      template,
      'ModelThrottled',
      (d) =>
        JSON.stringify(d) ===
        JSON.stringify([
          { Name: 'service', Value: name },
          { Name: 'workflow', Value: name },
        ]),
    );
    expect(alarms.map((a) => [a.Namespace, a.Statistic, a.Threshold])).toEqual([
      [metricsNamespace(config), 'Sum', config.alarms.throttlesThreshold],
    ]);
    // A workflow deployed with the offline stand-in calls no model: nothing to alarm on.
    expect(
      alarmsOf(workflowTemplates({ ...config, modelProvider: 'offline' })[name]!).filter(
        (a) => a.MetricName === 'ModelThrottled',
      ),
    ).toEqual([]);
  });

  it('alarms on mail refused unread (too large, over the MIME budget, unparseable), which nobody answers', () => {
    const [alarm] = alarmsOf(template).filter((a) => String(a.AlarmDescription).includes('refused unread'));
    const reasons = (alarm!.Metrics as Json[]).flatMap((m) => (m.MetricStat ? [m.MetricStat.Metric] : []));
    expect(reasons.map((m) => [m.MetricName, m.Dimensions.find((d: Json) => d.Name === 'reason').Value])).toEqual([
      ['EmailRejected', 'too_large'],
      ['EmailRejected', 'mime_budget'],
      ['EmailRejected', 'malformed_mime'],
      ['EmailRejected', 'parse_budget'],
    ]);
    expect(alarm!.Threshold).toBe(1);
  });
});

/**
 * An alarm's notifications: its actions but the Lambda one of the orchestration rollback alarm (it switches inbound
 * mail over).
 */
const notifications = (alarm: Json): unknown[] | undefined =>
  alarm.AlarmActions?.filter((a: Json) => !JSON.stringify(a).includes('Rollback'));

describe('alarm notifications', () => {
  it.each(ENV_NAMES)('%s: every alarm notifies the configured topic, or the topic of the configured email', (env) => {
    const base = fixtureEnv(env);
    const { email: _, ...alarms } = base.alarms;
    for (const [name, template] of Object.entries(
      workflowTemplates({ ...base, alarms: { ...alarms, topicArn: TOPIC } }),
    )) {
      // The smallest workflows of the fixture project (five steps) have 14.
      expect(alarmsOf(template).length, name).toBeGreaterThan(5);
      for (const alarm of alarmsOf(template))
        expect(notifications(alarm), `${name}: ${alarm.AlarmDescription}`).toEqual([TOPIC]);
      template.resourceCountIs('AWS::SNS::Topic', 0);
    }
    for (const [name, template] of Object.entries(
      workflowTemplates({ ...base, alarms: { ...alarms, email: 'on-call@example.com' } }),
    )) {
      const [topic] = Object.keys(template.findResources('AWS::SNS::Topic'));
      template.hasResourceProperties('AWS::SNS::Subscription', { Protocol: 'email', Endpoint: 'on-call@example.com' });
      for (const alarm of alarmsOf(template))
        expect(notifications(alarm), `${name}: ${alarm.AlarmDescription}`).toEqual([{ Ref: topic }]);
    }
    // Neither: the alarms still exist, notifying nobody.
    for (const template of Object.values(workflowTemplates({ ...base, alarms })))
      for (const alarm of alarmsOf(template)) expect(notifications(alarm) ?? []).toEqual([]);
  });

  it('takes an SNS topic ARN or an email, not both', () => {
    const dev = { ...fixtureEnv('dev') };
    expect(EnvConfigSchema.safeParse({ ...dev, alarms: { ...dev.alarms, topicArn: TOPIC } }).success).toBe(true);
    expect(
      EnvConfigSchema.safeParse({ ...dev, alarms: { ...dev.alarms, topicArn: 'on-call' } }).error?.issues[0],
    ).toMatchObject({ path: ['alarms', 'topicArn'], message: 'an SNS topic ARN' });
    expect(
      EnvConfigSchema.safeParse({ ...dev, alarms: { ...dev.alarms, topicArn: TOPIC, email: 'a@example.com' } }).error
        ?.issues[0],
    ).toMatchObject({ path: ['alarms', 'topicArn'] });
  });
});

describe('server access logs of the raw-mail bucket', () => {
  it('prod: written to a bucket of their own, which only S3 log delivery for the raw-mail bucket may write to', () => {
    expect(fixtureEnv('prod').email!.accessLogs).toBe(true);
    const { template } = synthApp('prod');
    const buckets = template.findResources('AWS::S3::Bucket');
    const [rawMail] = Object.entries(buckets).find(
      ([id]) => id.startsWith('EmailIngressRawMail') && !id.includes('AccessLogs'),
    )!;
    const [logs, logsBucket] = Object.entries(buckets).find(([id]) => id.includes('AccessLogs'))!;
    expect(buckets[rawMail]!.Properties.LoggingConfiguration).toEqual({
      DestinationBucketName: { Ref: logs },
      LogFilePrefix: 'raw-mail/',
    });
    expect(
      logsBucket.Properties.BucketEncryption.ServerSideEncryptionConfiguration[0].ServerSideEncryptionByDefault
        .SSEAlgorithm,
    ).toBe('AES256');
    const policy = Object.values(template.findResources('AWS::S3::BucketPolicy')).find(
      (p) => JSON.stringify(p.Properties.Bucket) === JSON.stringify({ Ref: logs }),
    )!;
    const writers = (policy.Properties.PolicyDocument.Statement as Json[]).filter((st) => st.Effect === 'Allow');
    expect(writers).toEqual([
      expect.objectContaining({
        Principal: { Service: 'logging.s3.amazonaws.com' },
        Action: 's3:PutObject',
        Condition: expect.objectContaining({ ArnLike: { 'aws:SourceArn': { 'Fn::GetAtt': [rawMail, 'Arn'] } } }),
      }),
    ]);
  });

  it('dev: off (the switch is email.accessLogs)', () => {
    const { template } = synthApp('dev');
    for (const bucket of Object.values(template.findResources('AWS::S3::Bucket')))
      expect(bucket.Properties.LoggingConfiguration).toBeUndefined();
    template.resourceCountIs('AWS::S3::Bucket', 1);
  });
});
