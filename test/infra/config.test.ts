/** Per-environment config: validated, selected by name, and what prod changes in the synthesized stack. */
import { RemovalPolicy } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { describe, expect, it } from 'vitest';
import { ENV_NAMES, EnvConfigSchema, getEnvConfig } from '../../infra/config.ts';
import { ConfigError } from '../../lambdas/lib/errors.ts';
import { synthApp } from './template.ts';

describe('getEnvConfig', () => {
  it.each(ENV_NAMES.map((n) => [n]))('returns the validated %s config', (name) => {
    const config = getEnvConfig(name);
    expect(config.name).toBe(name);
    expect(config.modelProvider).toBe('bedrock');
    expect(config.email.recipients.every((r) => r.endsWith(`@${config.email.receivingDomain}`))).toBe(true);
  });

  it('destroys data with the stack in dev and retains it in prod', () => {
    expect(getEnvConfig('dev').removalPolicy).toBe(RemovalPolicy.DESTROY);
    expect(getEnvConfig('prod').removalPolicy).toBe(RemovalPolicy.RETAIN);
    expect(getEnvConfig('prod').logLevel).toBe('INFO');
  });

  it('rejects an unknown environment, naming the known ones', () => {
    expect(() => getEnvConfig('production')).toThrow(ConfigError);
    expect(() => getEnvConfig('production')).toThrow('unknown environment "production" (known: dev, staging, prod)');
    expect(() => getEnvConfig('toString')).toThrow(ConfigError);
  });

  it('rejects a recipient outside the receiving domain and an invalid sender', () => {
    const dev = getEnvConfig('dev');
    const outside = EnvConfigSchema.safeParse({ ...dev, email: { ...dev.email, recipients: ['claims@elsewhere.example.org'] } });
    expect(outside.success).toBe(false);
    expect(outside.error!.issues[0]!.path).toEqual(['email', 'recipients']);
    expect(EnvConfigSchema.safeParse({ ...dev, email: { ...dev.email, mailFrom: 'not-an-address' } }).success).toBe(false);
    expect(EnvConfigSchema.safeParse({ ...dev, alarms: { ...dev.alarms, failedExecutionsThreshold: 0 } }).success).toBe(false);
  });
});

describe('the prod stack', () => {
  const { app, stacks, template } = synthApp('prod');
  const prod = getEnvConfig('prod');

  it('is named for prod, termination-protected, and retains its tables and logs', () => {
    expect(stacks.workflows['warranty-email']!.stackName).toBe('Stepwise-WarrantyEmail-prod');
    expect(stacks.workflows['warranty-email']!.terminationProtection).toBe(true);
    for (const type of ['AWS::DynamoDB::Table', 'AWS::Logs::LogGroup']) {
      for (const resource of Object.values(template.findResources(type))) expect(resource.DeletionPolicy, type).toBe('Retain');
    }
    template.allResourcesProperties('AWS::Logs::LogGroup', { RetentionInDays: prod.logRetention });
  });

  it('sends the failed-executions alarm to an encrypted topic with the configured email subscribed', () => {
    const topicId = Object.keys(template.findResources('AWS::SNS::Topic'))[0]!;
    const keyId = Object.keys(template.findResources('AWS::KMS::Key'))[0]!;
    template.resourceCountIs('AWS::KMS::Key', 1);
    template.hasResourceProperties('AWS::SNS::Topic', { KmsMasterKeyId: { 'Fn::GetAtt': [keyId, 'Arn'] } });
    template.hasResourceProperties('AWS::SNS::Subscription', { Protocol: 'email', Endpoint: prod.alarms.email, TopicArn: { Ref: topicId } });
    template.hasResourceProperties('AWS::CloudWatch::Alarm', { MetricName: 'ExecutionsFailed', Threshold: prod.alarms.failedExecutionsThreshold, AlarmActions: [{ Ref: topicId }] });
    template.hasResourceProperties('AWS::KMS::Key', { EnableKeyRotation: true });
  });

  it('tags every stack with the config tags', () => {
    template.hasResourceProperties('AWS::DynamoDB::Table', { Tags: [{ Key: 'environment', Value: 'prod' }, { Key: 'project', Value: 'stepwise' }] });
  });

  it('passes cdk-nag AwsSolutions with no unacknowledged finding', () => {
    expect(new AwsSolutionsChecks().validateScope(app).violations.map((v) => v.ruleName)).toEqual([]);
  });
});
