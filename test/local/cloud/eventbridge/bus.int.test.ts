import { EventBridgeClient, ListRulesCommand, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { App, Stack } from 'aws-cdk-lib';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type HttpEndpoint, LocalEventBus } from '../../../../src/local/cloud/eventbridge/bus.ts';
import { arnToLogicalId, type CfnTemplate } from '../../../../src/local/cloud/intrinsics.ts';

/**
 * A stack shaped like the lifecycle's: a custom bus, a listener Lambda with a DLQ and an input transformer, a
 * default-bus rule.
 */
function synthesize(): CfnTemplate {
  const app = new App();
  const stack = new Stack(app, 'BusTest');
  const bus = new events.EventBus(stack, 'LeadsBus');
  const code = lambda.Code.fromInline('exports.handler = async () => {}');
  const notifier = new lambda.Function(stack, 'Notifier', {
    runtime: lambda.Runtime.NODEJS_20_X,
    handler: 'index.handler',
    code,
  });
  const inbound = new lambda.Function(stack, 'Inbound', {
    runtime: lambda.Runtime.NODEJS_20_X,
    handler: 'index.handler',
    code,
  });
  new events.Rule(stack, 'OnStateChanged', {
    eventBus: bus,
    eventPattern: {
      source: ['stepwise.leads'],
      detailType: ['lead.state_changed'],
      detail: { to: [{ 'anything-but': 'lost' }] },
    },
    targets: [
      new targets.LambdaFunction(notifier, {
        deadLetterQueue: new sqs.Queue(stack, 'NotifierDlq'),
        retryAttempts: 1,
        event: events.RuleTargetInput.fromObject({
          lead: events.EventField.fromPath('$.detail.lead'),
          state: events.EventField.fromPath('$.detail.to'),
        }),
      }),
    ],
  });
  new events.Rule(stack, 'OnCrm', {
    eventPattern: { source: ['crm'] },
    targets: [new targets.LambdaFunction(inbound, { event: events.RuleTargetInput.fromEventPath('$.detail') })],
  });
  return app.synth().getStackByName('BusTest').template as CfnTemplate;
}

describe('LocalEventBus with a synthesized template and the real EventBridge client', () => {
  const delivered: { target: string; input: unknown }[] = [];
  let bus: LocalEventBus;
  let http: HttpEndpoint;
  let client: EventBridgeClient;
  let busName: string;

  beforeAll(async () => {
    const template = synthesize();
    busName = Object.values(template.Resources!).find((r) => r.Type === 'AWS::Events::EventBus')!.Properties!
      .Name as string;
    bus = new LocalEventBus(template, {
      deliver: (arn, input) => {
        const target = arnToLogicalId(arn);
        if (target.startsWith('Notifier') && (input as { lead: string }).lead === 'L-fail')
          throw new Error('notifier rejected it');
        delivered.push({ target, input });
      },
    });
    http = await bus.startHttpEndpoint();
    client = new EventBridgeClient({
      endpoint: http.endpoint,
      region: 'us-east-1',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    });
  });

  afterAll(async () => {
    client?.destroy();
    await http?.stop();
  });

  it('applies the synthesized rules, patterns and input transformers to events sent with PutEventsCommand', async () => {
    const result = await client.send(
      new PutEventsCommand({
        Entries: [
          {
            EventBusName: busName,
            Source: 'stepwise.leads',
            DetailType: 'lead.state_changed',
            Detail: JSON.stringify({ lead: 'L-1', to: 'qualified' }),
            Time: new Date('2024-01-01T00:00:00Z'),
          },
          {
            EventBusName: busName,
            Source: 'stepwise.leads',
            DetailType: 'lead.state_changed',
            Detail: JSON.stringify({ lead: 'L-2', to: 'lost' }),
          },
          { Source: 'crm', DetailType: 'lead.created', Detail: JSON.stringify({ email: 'a@example.com' }) },
          { Source: 'crm', DetailType: 'lead.created', Detail: 'not json' },
        ],
      }),
    );
    await bus.drain();
    expect(result.FailedEntryCount).toBe(1);
    expect(result.Entries!.map((e) => e.ErrorCode ?? (e.EventId ? 'id' : 'none'))).toEqual([
      'id',
      'id',
      'id',
      'MalformedDetail',
    ]);
    expect(bus.published[0]!.time).toBe('2024-01-01T00:00:00Z');
    expect(delivered.map((d) => [d.target.replace(/[A-F0-9]{8}$/, ''), d.input])).toEqual([
      ['Notifier', { lead: 'L-1', state: 'qualified' }],
      ['Inbound', { email: 'a@example.com' }],
    ]);
  });

  it('dead-letters a delivery that fails after the synthesized retry policy, with the resolved DLQ ARN', async () => {
    await client.send(
      new PutEventsCommand({
        Entries: [
          {
            EventBusName: busName,
            Source: 'stepwise.leads',
            DetailType: 'lead.state_changed',
            Detail: JSON.stringify({ lead: 'L-fail', to: 'won' }),
          },
        ],
      }),
    );
    await bus.drain();
    expect(bus.deadLetters).toHaveLength(1);
    expect(bus.deadLetters[0]).toMatchObject({ attempts: 2, error: { message: 'notifier rejected it' } });
    expect(arnToLogicalId(bus.deadLetters[0]!.deadLetterArn!)).toMatch(/^NotifierDlq/);
  });

  it('answers other operations and malformed requests with EventBridge-style errors', async () => {
    await expect(client.send(new ListRulesCommand({}))).rejects.toMatchObject({ name: 'UnknownOperationException' });
    const tooMany = Array.from({ length: 11 }, () => ({ Source: 'crm', DetailType: 'x', Detail: '{}' }));
    await expect(client.send(new PutEventsCommand({ Entries: tooMany }))).rejects.toMatchObject({
      name: 'ValidationException',
    });
    const raw = await fetch(http.endpoint, {
      method: 'POST',
      headers: { 'x-amz-target': 'AWSEvents.PutEvents' },
      body: '{',
    });
    expect(raw.status).toBe(400);
    expect(await raw.json()).toMatchObject({ __type: 'SerializationException' });
  });
});
