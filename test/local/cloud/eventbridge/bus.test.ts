import { describe, expect, it } from 'vitest';
import { DefinitionError, InvalidInputError } from '../../../../src/core/errors.ts';
import {
  type DeliveryContext,
  entrySize,
  LocalEventBus,
  MAX_PUT_EVENTS_BYTES,
  type PutEventsEntry,
} from '../../../../src/local/cloud/eventbridge/bus.ts';
import type { CfnTemplate } from '../../../../src/local/cloud/intrinsics.ts';

const ACCOUNT = '123456789012';
const fnArn = (id: string) => `arn:aws:lambda:us-east-1:${ACCOUNT}:function:${id}`;

/** Shaped like CDK output: a custom bus referenced with Ref, targets with GetAtt, a DLQ, a retry policy. */
const template: CfnTemplate = {
  Resources: {
    LeadsBus: { Type: 'AWS::Events::EventBus', Properties: { Name: 'leads' } },
    AuditBus: { Type: 'AWS::Events::EventBus', Properties: {} },
    Notifier: { Type: 'AWS::Lambda::Function', Properties: {} },
    Crm: { Type: 'AWS::Lambda::Function', Properties: {} },
    Dlq: { Type: 'AWS::SQS::Queue', Properties: {} },
    OnStateChanged: {
      Type: 'AWS::Events::Rule',
      Properties: {
        EventBusName: { Ref: 'LeadsBus' },
        EventPattern: { source: ['stepwise.leads'], 'detail-type': ['lead.state_changed'] },
        State: 'ENABLED',
        Targets: [
          {
            Id: 'notify',
            Arn: { 'Fn::GetAtt': ['Notifier', 'Arn'] },
            DeadLetterConfig: { Arn: { 'Fn::GetAtt': ['Dlq', 'Arn'] } },
            RetryPolicy: { MaximumRetryAttempts: 2 },
          },
          { Id: 'crm', Arn: { 'Fn::GetAtt': ['Crm', 'Arn'] }, InputPath: '$.detail' },
        ],
      },
    },
    OnCrmEvent: {
      Type: 'AWS::Events::Rule',
      Properties: {
        Name: 'crm-inbound',
        EventPattern: JSON.stringify({ source: ['crm'] }),
        Targets: [{ Id: 'crm', Arn: fnArn('Inbound') }],
      },
    },
    OnAudit: {
      Type: 'AWS::Events::Rule',
      Properties: {
        EventBusName: { 'Fn::GetAtt': ['AuditBus', 'Arn'] },
        EventPattern: { source: [{ prefix: '' }] },
        Targets: [{ Id: 'a', Arn: fnArn('Audit') }],
      },
    },
    Disabled: {
      Type: 'AWS::Events::Rule',
      Properties: { State: 'DISABLED', EventPattern: { source: ['crm'] }, Targets: [{ Id: 'x', Arn: fnArn('Never') }] },
    },
    Nightly: {
      Type: 'AWS::Events::Rule',
      Properties: { ScheduleExpression: 'rate(1 day)', Targets: [{ Id: 'x', Arn: fnArn('Never') }] },
    },
  },
};

interface Call {
  arn: string;
  input: unknown;
  context: DeliveryContext;
}

function recordingBus(
  behaviour: (call: Call, bus: LocalEventBus) => unknown = () => undefined,
  t: CfnTemplate = template,
) {
  const calls: Call[] = [];
  const bus: LocalEventBus = new LocalEventBus(t, {
    now: () => new Date('2024-05-06T07:08:09.123Z'),
    deliver: (arn, input, context) => {
      const call = { arn, input, context };
      calls.push(call);
      return behaviour(call, bus);
    },
  });
  return { bus, calls };
}

const stateChanged = (detail: object = { lead: 'L-1', to: 'qualified' }): PutEventsEntry => ({
  EventBusName: 'leads',
  Source: 'stepwise.leads',
  DetailType: 'lead.state_changed',
  Detail: JSON.stringify(detail),
});

describe('LocalEventBus from a template', () => {
  it('reads enabled pattern rules, their bus and resolved target ARNs; skips disabled and scheduled rules', () => {
    const { bus } = recordingBus();
    expect(bus.rules.map((r) => [r.logicalId, r.name, r.eventBusName, r.targets.map((t) => t.arn)])).toEqual([
      ['OnStateChanged', 'OnStateChanged', 'leads', [fnArn('Notifier'), fnArn('Crm')]],
      ['OnCrmEvent', 'crm-inbound', 'default', [fnArn('Inbound')]],
      ['OnAudit', 'OnAudit', 'AuditBus', [fnArn('Audit')]],
    ]);
    expect(bus.rules[0]!.targets[0]).toMatchObject({
      deadLetterArn: `arn:aws:sqs:us-east-1:${ACCOUNT}:Dlq`,
      maxRetries: 2,
    });
    expect(bus.rules[0]!.arn).toBe(`arn:aws:events:us-east-1:${ACCOUNT}:rule/leads/OnStateChanged`);
    expect(bus.rules[1]!.arn).toBe(`arn:aws:events:us-east-1:${ACCOUNT}:rule/crm-inbound`);
    expect([...bus.eventBusNames].sort()).toEqual(['AuditBus', 'default', 'leads']);
  });

  it('builds the full envelope, returns an EventId per entry and delivers to every target of matching rules', async () => {
    const { bus, calls } = recordingBus();
    const result = await bus.putEvents([{ ...stateChanged(), Resources: ['arn:aws:x'] }]);
    await bus.drain();
    expect(result).toEqual({ FailedEntryCount: 0, Entries: [{ EventId: expect.any(String) }] });
    const event = bus.published[0]!;
    expect(event).toEqual({
      version: '0',
      id: result.Entries[0]!.EventId,
      'detail-type': 'lead.state_changed',
      source: 'stepwise.leads',
      account: ACCOUNT,
      time: '2024-05-06T07:08:09Z',
      region: 'us-east-1',
      resources: ['arn:aws:x'],
      detail: { lead: 'L-1', to: 'qualified' },
    });
    expect(calls.map((c) => [c.arn, c.input, c.context.targetId, c.context.ruleLogicalId])).toEqual([
      [fnArn('Notifier'), event, 'notify', 'OnStateChanged'],
      [fnArn('Crm'), { lead: 'L-1', to: 'qualified' }, 'crm', 'OnStateChanged'],
    ]);
    expect(calls[0]!.context.event).toBe(event);
  });

  it('routes by bus: the default bus when EventBusName is omitted, a bus ARN like its name', async () => {
    const { bus, calls } = recordingBus();
    await bus.putEvents([
      { Source: 'crm', DetailType: 'lead.created', Detail: '{}' },
      { ...stateChanged(), EventBusName: `arn:aws:events:us-east-1:${ACCOUNT}:event-bus/LeadsBus` },
      { Source: 'crm', DetailType: 'x', Detail: '{}', EventBusName: 'AuditBus' },
      { Source: 'stepwise.leads', DetailType: 'lead.state_changed', Detail: '{}' }, // default bus: no rule for it there
    ]);
    await bus.drain();
    expect(calls.map((c) => c.arn)).toEqual([fnArn('Inbound'), fnArn('Notifier'), fnArn('Crm'), fnArn('Audit')]);
  });

  it('fails invalid entries alone, with the API error codes', async () => {
    const { bus, calls } = recordingBus();
    const result = await bus.putEvents([
      stateChanged(),
      { ...stateChanged(), Detail: '{not json' },
      { ...stateChanged(), Detail: '[1,2]' },
      { ...stateChanged(), Source: undefined },
      { ...stateChanged(), EventBusName: 'nope' },
      { ...stateChanged(), Time: 'yesterday' },
    ]);
    await bus.drain();
    expect(result.FailedEntryCount).toBe(5);
    expect(result.Entries.map((e) => e.ErrorCode ?? 'ok')).toEqual([
      'ok',
      'MalformedDetail',
      'MalformedDetail',
      'InvalidArgument',
      'ResourceNotFoundException',
      'InvalidArgument',
    ]);
    expect(result.Entries[3]!.ErrorMessage).toMatch(/Source is a required argument/);
    expect(bus.published).toHaveLength(1);
    expect(calls).toHaveLength(2);
  });

  it('rejects a call with no entries or more than 10, like the API', async () => {
    const { bus } = recordingBus();
    await expect(bus.putEvents([])).rejects.toThrow(InvalidInputError);
    await expect(bus.putEvents(Array.from({ length: 11 }, () => stateChanged()))).rejects.toThrow(
      /1 to 10 entries, got 11/,
    );
  });

  it('rejects a call whose entries total 256 KiB or more, counting sizes as EventBridge does', async () => {
    const { bus, calls } = recordingBus();
    const sized = (bytes: number): PutEventsEntry => ({
      ...stateChanged({ text: '' }),
      Detail: JSON.stringify({ text: 'x'.repeat(bytes - 11) }),
      Time: new Date(0),
    });
    expect(entrySize(sized(1000))).toBe(14 + 'stepwise.leads'.length + 'lead.state_changed'.length + 1000);
    expect(entrySize({ Source: 'é', DetailType: 't', Detail: '{}', Resources: ['ab'] })).toBe(2 + 1 + 2 + 2);
    const room = MAX_PUT_EVENTS_BYTES - (entrySize(sized(11)) - 11) - 1;
    await expect(bus.putEvents([sized(room)])).resolves.toMatchObject({ FailedEntryCount: 0 });
    await expect(bus.putEvents([sized(room + 1)])).rejects.toThrow(
      /^Total size of the entries in the request is over the limit/,
    );
    await expect(bus.putEvents([sized(room / 2), sized(room / 2 + 100)])).rejects.toThrow(InvalidInputError);
    await bus.drain();
    expect(calls).toHaveLength(2); // the accepted one, to both targets
  });

  it('takes Time as a Date, ISO text or epoch seconds', async () => {
    const { bus } = recordingBus();
    await bus.putEvents([
      { ...stateChanged(), Time: new Date('2020-01-01T00:00:00Z') },
      { ...stateChanged(), Time: '2021-02-03T04:05:06.789Z' },
      { ...stateChanged(), Time: 1_700_000_000 },
    ]);
    expect(bus.published.map((e) => e.time)).toEqual([
      '2020-01-01T00:00:00Z',
      '2021-02-03T04:05:06Z',
      '2023-11-14T22:13:20Z',
    ]);
    await bus.drain();
  });

  it('delivers after putEvents has answered', async () => {
    const { bus, calls } = recordingBus();
    const put = bus.putEvents([stateChanged()]);
    expect(calls).toHaveLength(0);
    await put;
    await bus.drain();
    expect(calls).toHaveLength(2);
  });

  it('drain() waits for deliveries of events that targets put themselves, recursively', async () => {
    const order: string[] = [];
    const { bus, calls } = recordingBus(async (call, self) => {
      await new Promise((r) => setTimeout(r, 5));
      const detail = call.input as { lead?: string; depth?: number };
      if (call.arn === fnArn('Crm') && (detail.depth ?? 0) < 3) {
        order.push(`crm ${detail.depth ?? 0}`);
        await self.putEvents([stateChanged({ lead: 'L-1', depth: (detail.depth ?? 0) + 1 })]);
      }
    });
    await bus.putEvents([stateChanged({ lead: 'L-1', depth: 0 })]);
    await bus.drain();
    expect(order).toEqual(['crm 0', 'crm 1', 'crm 2']);
    expect(bus.published).toHaveLength(4);
    expect(calls).toHaveLength(8);
  });

  it('retries a failing target per its RetryPolicy, then records it as a dead letter with its DLQ', async () => {
    const { bus, calls } = recordingBus((call) => {
      if (call.arn === fnArn('Notifier')) throw new Error('notifier down');
    });
    await bus.putEvents([stateChanged()]);
    await bus.drain();
    expect(calls.filter((c) => c.arn === fnArn('Notifier'))).toHaveLength(3);
    expect(bus.deadLetters).toEqual([
      {
        targetArn: fnArn('Notifier'),
        deadLetterArn: `arn:aws:sqs:us-east-1:${ACCOUNT}:Dlq`,
        ruleLogicalId: 'OnStateChanged',
        targetId: 'notify',
        event: bus.published[0],
        error: new Error('notifier down'),
        attempts: 3,
      },
    ]);
  });

  it('records a failed delivery without a DLQ too, and a retry that succeeds is not a dead letter', async () => {
    let notifierFailures = 0;
    const { bus } = recordingBus(async (call) => {
      if (call.arn === fnArn('Crm')) throw 'crm rejected'; // non-Error throws are kept as Errors
      if (call.arn === fnArn('Notifier') && notifierFailures++ < 1) throw new Error('transient');
    });
    await bus.putEvents([stateChanged()]);
    await bus.drain();
    expect(bus.deadLetters.map((d) => [d.targetId, d.deadLetterArn, d.error.message, d.attempts])).toEqual([
      ['crm', undefined, 'crm rejected', 1],
    ]);
  });

  it('accepts an injected resolver for the ARNs and bus names', () => {
    const bus = new LocalEventBus(
      {
        Resources: {
          Bus: { Type: 'AWS::Events::EventBus', Properties: { Name: 'b' } },
          Rule: {
            Type: 'AWS::Events::Rule',
            Properties: {
              EventBusName: { Ref: 'Bus' },
              EventPattern: { source: ['s'] },
              Targets: [{ Id: 't', Arn: { Ref: 'Fn' } }],
            },
          },
        },
      },
      { deliver: () => undefined, resolve: (v) => (typeof v === 'string' ? v : `resolved:${JSON.stringify(v)}`) },
    );
    expect(bus.rules[0]!.eventBusName).toBe('resolved:{"Ref":"Bus"}');
    expect(bus.rules[0]!.targets[0]!.arn).toBe('resolved:{"Ref":"Fn"}');
  });

  it('names the rule when a pattern or target is malformed', () => {
    const rule = (properties: Record<string, unknown>): CfnTemplate => ({
      Resources: { BadRule: { Type: 'AWS::Events::Rule', Properties: properties } },
    });
    const build = (properties: Record<string, unknown>) => () =>
      new LocalEventBus(rule(properties), { deliver: () => undefined });
    expect(build({ EventPattern: { source: 'crm' } })).toThrow(DefinitionError);
    expect(build({ EventPattern: { source: 'crm' } })).toThrow(
      /Resources\.BadRule\.Properties\.EventPattern: invalid event pattern at source/,
    );
    expect(build({ EventPattern: { source: ['crm'] }, Targets: [{ Arn: 'arn:x' }] })).toThrow(
      /Resources\.BadRule\.Properties\.Targets\.0\.Id/,
    );
    expect(
      build({ EventPattern: { source: ['crm'] }, Targets: [{ Id: 't', Arn: 'arn:x', InputPath: 'detail' }] }),
    ).toThrow(/Targets\.0\.InputPath: unsupported JSONPath/);
  });
});
