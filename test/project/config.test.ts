/**
 * Per-environment config: a project's (the fixture project's stepwise.config.ts), validated, selected by name, and what
 * prod changes in the synthesized stack.
 */
import { RemovalPolicy } from 'aws-cdk-lib';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { AwsSolutionsChecks } from 'cdk-nag';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/core/errors.ts';
import {
  EnvConfigSchema,
  LOG_RETENTION_DAYS,
  resolveEnvironment,
  type StepwiseConfig,
} from '../../src/project/config.ts';
import { synthApp } from '../cdk/template.ts';
import projectConfig from '../fixtures/project/stepwise.config.ts';
import { fixtureEnv } from '../support/fixture-project.ts';

describe('resolveEnvironment', () => {
  it.each(Object.keys(projectConfig.environments).map((n) => [n]))(
    'returns the validated %s config of the fixture project',
    (name) => {
      const config = fixtureEnv(name);
      expect(config.name).toBe(name);
      expect(config.modelProvider).toBe('bedrock');
      expect(config.email!.recipients.every((r) => r.endsWith(`@${config.email!.receivingDomain}`))).toBe(true);
    },
  );

  it('destroys data with the stack in dev and retains it in prod', () => {
    expect(fixtureEnv('dev').removalPolicy).toBe(RemovalPolicy.DESTROY);
    expect(fixtureEnv('prod').removalPolicy).toBe(RemovalPolicy.RETAIN);
    expect(fixtureEnv('prod').logLevel).toBe('INFO');
  });

  it('rejects an unknown environment in one line naming the known ones', () => {
    expect(() => resolveEnvironment(projectConfig, 'production')).toThrow(ConfigError);
    expect(() => resolveEnvironment(projectConfig, 'production')).toThrow(
      /^unknown environment "production" \(stepwise.config.ts defines: dev, staging, prod\); select one with -c env=NAME$/,
    );
    expect(() => resolveEnvironment(projectConfig, 'toString')).toThrow(ConfigError);
  });

  it('refuses a placeholder value outside dev, in one line naming the field', () => {
    expect(() => resolveEnvironment(projectConfig, 'prod')).toThrow(
      /^environment "prod": alarms\.email: "desk-alerts@example\.com" is a placeholder: set the real value in stepwise\.config\.ts$/,
    );
    const real: StepwiseConfig = {
      environments: {
        prod: {
          account: '123456789012',
          region: 'eu-west-1',
          email: {
            receivingDomain: 'mail.acme.io',
            recipients: ['cases@mail.acme.io'],
            mailFrom: 'cases@mail.acme.io',
            maxEmailBytes: 1 << 20,
          },
        },
      },
    };
    expect(resolveEnvironment(real, 'prod').account).toBe('123456789012');
    const placeholderUrl: StepwiseConfig = {
      environments: {
        prod: { account: '123456789012', lifecycles: { orders: { crmWebhookUrl: 'https://crm.example.com/hook' } } },
      },
    };
    expect(() => resolveEnvironment(placeholderUrl, 'prod')).toThrow(
      /^environment "prod": lifecycles\.orders\.crmWebhookUrl: "https:\/\/crm\.example\.com\/hook" is a placeholder/,
    );
    expect(() => resolveEnvironment({ environments: { staging: {} } }, 'staging')).toThrow(
      /^environment "staging": account: required outside dev/,
    );
    // dev runs locally with placeholders and no account.
    expect(resolveEnvironment(projectConfig, 'dev').email!.receivingDomain).toBe('dev.desk.example.com');
  });

  it('accepts exactly the log retention periods CloudWatch Logs does', () => {
    expect([...LOG_RETENTION_DAYS]).toEqual(Object.values(RetentionDays).filter((v) => typeof v === 'number'));
    expect(() => resolveEnvironment({ environments: { dev: { logRetention: 10 as 14 } } }, 'dev')).toThrow(
      /^environment "dev": logRetention: /,
    );
  });

  it('needs nothing but a name: every other setting has a default', () => {
    expect(resolveEnvironment({ environments: { dev: {} } }, 'dev')).toMatchObject({
      name: 'dev',
      removalPolicy: RemovalPolicy.RETAIN,
      executionDataInLogs: false,
      sourceMaps: false,
    });
  });

  it('rejects a recipient outside the receiving domain and an invalid sender', () => {
    const dev = fixtureEnv('dev');
    const outside = EnvConfigSchema.safeParse({
      ...dev,
      removalPolicy: 'destroy',
      email: { ...dev.email, recipients: ['cases@elsewhere.example.org'] },
    });
    expect(outside.success).toBe(false);
    expect(outside.error!.issues[0]!.path).toEqual(['email', 'recipients']);
    expect(() =>
      resolveEnvironment({ environments: { dev: { email: { ...dev.email!, mailFrom: 'not-an-address' } } } }, 'dev'),
    ).toThrow(/^environment "dev": email\.mailFrom: /);
    expect(() =>
      resolveEnvironment(
        { environments: { dev: { alarms: { failedExecutionsThreshold: 0, evaluationPeriods: 1 } } } },
        'dev',
      ),
    ).toThrow(/alarms\.failedExecutionsThreshold/);
  });
});

describe('the prod stack', () => {
  const { app, stacks, template } = synthApp('prod');
  const prod = fixtureEnv('prod');

  it('is named for prod, termination-protected, and retains its tables and logs', () => {
    expect(stacks.workflows['case-desk']!.stackName).toBe('Stepwise-CaseDesk-prod');
    expect(stacks.workflows['case-desk']!.terminationProtection).toBe(true);
    for (const type of ['AWS::DynamoDB::Table', 'AWS::Logs::LogGroup']) {
      for (const resource of Object.values(template.findResources(type)))
        expect(resource.DeletionPolicy, type).toBe('Retain');
    }
    template.allResourcesProperties('AWS::Logs::LogGroup', { RetentionInDays: prod.logRetention });
  });

  it('sends the failed-executions alarm to an encrypted topic with the configured email subscribed', () => {
    const topicId = Object.keys(template.findResources('AWS::SNS::Topic'))[0]!;
    const keyId = Object.keys(template.findResources('AWS::KMS::Key'))[0]!;
    template.resourceCountIs('AWS::KMS::Key', 1);
    template.hasResourceProperties('AWS::SNS::Topic', { KmsMasterKeyId: { 'Fn::GetAtt': [keyId, 'Arn'] } });
    template.hasResourceProperties('AWS::SNS::Subscription', {
      Protocol: 'email',
      Endpoint: prod.alarms.email,
      TopicArn: { Ref: topicId },
    });
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'ExecutionsFailed',
      Threshold: prod.alarms.failedExecutionsThreshold,
      AlarmActions: [{ Ref: topicId }],
    });
    template.hasResourceProperties('AWS::KMS::Key', { EnableKeyRotation: true });
  });

  it('tags every stack with the config tags', () => {
    template.hasResourceProperties('AWS::DynamoDB::Table', {
      Tags: [
        { Key: 'environment', Value: 'prod' },
        { Key: 'project', Value: 'stepwise-fixture' },
      ],
    });
  });

  it('passes cdk-nag AwsSolutions with no unacknowledged finding', () => {
    expect(new AwsSolutionsChecks().validateScope(app).violations.map((v) => v.ruleName)).toEqual([]);
  });
});
