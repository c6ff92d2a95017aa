/**
 * `member.state_changed`, what each listener derives from it, the listener handlers and the port adapters (the features
 * of the fixture lifecycle).
 */

import type { PutEventsRequestEntry } from '@aws-sdk/client-eventbridge';
import {
  ConflictException,
  CreateScheduleCommand,
  DeleteScheduleCommand,
  GetScheduleCommand,
  ResourceNotFoundException,
  SchedulerClient,
  UpdateScheduleCommand,
} from '@aws-sdk/client-scheduler';
import { SESv2Client, SendEmailCommand } from '@aws-sdk/client-sesv2';
import { mockClient } from 'aws-sdk-client-mock';
import { describe, expect, it } from 'vitest';
import { CrmSyncError, InvalidInputError } from '../../../src/core/errors.ts';
import type { EntitySnapshot, LifecycleEvent } from '../../../src/definitions/lifecycle/schema.ts';
import { LIFECYCLE_SOURCE } from '../../../src/definitions/lifecycle/schema.ts';
import { LocalScheduler } from '../../../src/local/cloud/scheduler.ts';
import { stateChangedType } from '../../../src/runtime/lifecycle/envelope.ts';
import { createHandler as crmSyncHandler } from '../../../src/runtime/lifecycle/handlers/crm-sync.ts';
import { createHandler as senderHandler } from '../../../src/runtime/lifecycle/handlers/follow-up-sender.ts';
import { createHandler as notifierHandler } from '../../../src/runtime/lifecycle/handlers/notifier.ts';
import { createHandler as timersHandler } from '../../../src/runtime/lifecycle/handlers/timers.ts';
import {
  eventBridgeScheduler,
  FollowUpSendError,
  httpCrm,
  httpFollowUpChannel,
  recordingCrm,
  recordingFollowUpChannel,
  recordingNotifier,
  sesNotifier,
} from '../../../src/runtime/lifecycle/ports.ts';
import {
  crmUpdateOf,
  notificationFor,
  parseStateChanged,
  type StateChangedDetail,
  stateChangeOf,
} from '../../../src/runtime/lifecycle/state-changes.ts';
import { memoryLifecycleStore } from '../../../src/runtime/lifecycle/store.ts';
import { timerName } from '../../../src/runtime/lifecycle/timers.ts';
import { applyEvent, initialSnapshot } from '../../../src/runtime/lifecycle/transition.ts';
import { agent, def } from './support.ts';

const attendCall = agent('attend-call');
/** What the stack gives every listener: the lifecycle it belongs to. */
const LIFECYCLE = def.name;

/** Apply events in order from a new member; returns the change the last one made and the snapshot before it. */
function changeOf(
  types: string[],
  config = attendCall,
): { before: EntitySnapshot; change: StateChangedDetail | undefined } {
  let member = initialSnapshot(def);
  let change: StateChangedDetail | undefined;
  let before = member;
  types.forEach((type, i) => {
    const event: LifecycleEvent = {
      id: `e${i + 1}`,
      entityId: 'member-1',
      type,
      time: `2025-01-06T${String(9 + i).padStart(2, '0')}:00:00Z`,
    };
    const result = applyEvent(def, member, event, config);
    before = member;
    change = stateChangeOf(def, member, result);
    member = result.snapshot;
  });
  return { before, change };
}

const envelopeOf = (detail: unknown, overrides: Record<string, unknown> = {}) => ({
  version: '0',
  id: 'eb-9',
  'detail-type': stateChangedType(def),
  source: LIFECYCLE_SOURCE,
  account: '123456789012',
  time: '2025-01-06T12:00:01Z',
  region: 'us-east-1',
  resources: [],
  detail,
  ...overrides,
});

describe('member.state_changed', () => {
  it('describes a state change with the trigger, the raised events and the follow-up eligibility', () => {
    expect(changeOf(['agent.message_sent', 'member.message_sent', 'call.booked']).change).toEqual({
      changeId: 'member-1:v4',
      entityId: 'member-1',
      eventId: 'e3',
      eventType: 'call.booked',
      at: '2025-01-06T11:00:00Z',
      from: 'engaged',
      to: 'booked',
      path: 'active.booked',
      context: { followUpsStopped: true },
      version: 4,
      conversation: 1,
      eventCount: 4,
      canReceiveFollowUp: false,
      raised: ['follow_up.stopped'],
    });
  });

  it('is published for a context-only change, never for an event that changed neither state nor context', () => {
    const stopped = changeOf(['agent.message_sent', 'member.message_sent', 'link.clicked']).change!;
    expect(stopped).toMatchObject({
      from: 'engaged',
      to: 'engaged',
      context: { followUpsStopped: true },
      raised: ['follow_up.stopped'],
    });
    expect(changeOf(['agent.message_sent', 'agent.message_sent']).change).toBeUndefined();
    expect(changeOf(['member.sneezed']).change).toBeUndefined();
    expect(changeOf(['agent.message_sent', 'crm.state_set']).change).toBeUndefined(); // refused: no detail.state
  });

  it('parses only member.state_changed from the lifecycle, with a complete detail', () => {
    const detail = changeOf(['agent.message_sent']).change!;
    expect(parseStateChanged(envelopeOf(detail))).toEqual(detail);
    expect(() => parseStateChanged(envelopeOf(detail, { source: 'stepwise.crm' }))).toThrow(InvalidInputError);
    expect(() => parseStateChanged(envelopeOf(detail, { 'detail-type': 'call.booked' }))).toThrow(
      /state change event: detail-type/,
    );
    expect(() => parseStateChanged(envelopeOf({ ...detail, version: undefined }))).toThrow(/detail\.version/);
  });

  it('tells the CRM the new position with its version', () => {
    expect(crmUpdateOf(changeOf(['agent.message_sent', 'member.message_sent']).change!)).toEqual({
      entityId: 'member-1',
      state: 'engaged',
      path: 'active.qualification.engaged',
      followUpsStopped: false,
      canReceiveFollowUp: true,
      version: 2,
      conversation: 1,
      updatedAt: '2025-01-06T10:00:00Z',
    });
  });

  it('notifies the team on entering a notify state only', () => {
    const booked = notificationFor(def, changeOf(['agent.message_sent', 'member.message_sent', 'call.booked']).change!);
    expect(booked).toMatchObject({ entityId: 'member-1', key: 'member-1:v4', subject: 'Member member-1: booked' });
    expect(booked!.text).toContain('Cause: call.booked (e3) at 2025-01-06T11:00:00Z (raised: follow_up.stopped).');
    expect(notificationFor(def, changeOf(['agent.message_sent', 'member.message_sent']).change!)).toBeUndefined(); // engaged
    expect(
      notificationFor(def, changeOf(['agent.message_sent', 'member.message_sent', 'link.clicked']).change!),
    ).toBeUndefined(); // context only
    expect(notificationFor(def, changeOf(['agent.message_sent', 'conversation.stopped']).change!)?.subject).toBe(
      'Member member-1: stopped',
    );
  });
});

describe('listener handlers', () => {
  const engaged = envelopeOf(changeOf(['agent.message_sent', 'member.message_sent']).change!);
  const cold = envelopeOf(changeOf(['agent.message_sent', 'follow_ups.exhausted']).change!);
  const goal = envelopeOf(changeOf(['agent.message_sent', 'call.booked', 'call.attended']).change!);

  it('timers: sets the follow-up chain only when canReceiveFollowUp, cancels it otherwise; a redelivery or an older change changes nothing', async () => {
    const timers = new LocalScheduler({ deliver: async () => {} });
    const handler = timersHandler({ LIFECYCLE, AGENT_CONFIG: JSON.stringify(attendCall) }, { timers });
    const set = await handler(engaged);
    expect(set.set).toMatchObject([
      { kind: 'follow-up', dueAt: '2025-01-08T10:00:00Z', stamp: { version: 2, step: 1 } },
    ]);
    const outreach = envelopeOf(changeOf(['agent.message_sent']).change!);
    expect((await handler(outreach)).kept).toEqual([timerName('follow-up', 'member-1')]); // v1 arrives late: the v2 timer stays
    await handler(engaged); // a redelivery
    expect(timers.pending).toMatchObject([{ stamp: { version: 2 } }]);
    expect((await handler(cold)).cancel).toEqual([timerName('follow-up', 'member-1')]);
    expect(timers.pending).toEqual([]);
  });

  it('CRM sync: records every change, context-only ones included', async () => {
    const crm = recordingCrm();
    const handler = crmSyncHandler({}, { crm });
    await handler(engaged);
    await handler(envelopeOf(changeOf(['agent.message_sent', 'member.message_sent', 'link.clicked']).change!));
    expect(crm.calls.map((c) => [c.state, c.version, c.followUpsStopped])).toEqual([
      ['engaged', 2, false],
      ['engaged', 3, true],
    ]);
  });

  it('notifier: sends for notify states and ignores the rest', async () => {
    const notifier = recordingNotifier();
    const handler = notifierHandler({ LIFECYCLE }, { notifier });
    expect((await handler(goal)).notified?.subject).toBe('Member member-1: goal hit');
    expect(await handler(engaged)).toEqual({ notified: null });
    expect(notifier.sent).toHaveLength(1);
  });

  it('import without their environment and name the missing variable on the first event', async () => {
    await expect(crmSyncHandler({})(engaged)).rejects.toThrow("this function's environment has no CRM_WEBHOOK_URL");
    await expect(notifierHandler({ LIFECYCLE, MAIL_FROM: 'a@example.com' })(goal)).rejects.toThrow('NOTIFY_TO');
    await expect(timersHandler({ LIFECYCLE, AGENT_CONFIG: JSON.stringify(attendCall) })(engaged)).rejects.toThrow(
      'SCHEDULE_GROUP',
    );
    await expect(timersHandler({ LIFECYCLE })(engaged)).rejects.toThrow('AGENT_CONFIG');
    await expect(timersHandler({ AGENT_CONFIG: JSON.stringify(attendCall) })(engaged)).rejects.toThrow('LIFECYCLE');
    await expect(crmSyncHandler({}, { crm: recordingCrm() })({ source: 'x' })).rejects.toThrow(InvalidInputError);
  });
});

describe('follow-up sender', () => {
  const config = { ...attendCall, timers: { followUpHours: [48, 72], coldAfterDays: 7, renewalAfterDays: null } };
  const due = (version: number, step: number, dueAt = '2025-01-08T09:00:00Z') => ({
    version: '0',
    id: `eb-due-${step}`,
    'detail-type': 'follow_up.due',
    source: LIFECYCLE_SOURCE,
    account: '123456789012',
    time: dueAt,
    region: 'us-east-1',
    resources: [],
    detail: { entityId: 'member-1', dueAt, timer: { version, setAt: '2025-01-06T09:00:00Z', step } },
  });
  async function setup() {
    const store = memoryLifecycleStore();
    const r = applyEvent(
      def,
      initialSnapshot(def),
      { id: 'e1', entityId: 'member-1', type: 'agent.message_sent', time: '2025-01-06T09:00:00Z' },
      config,
    );
    await store.append('member-1', 0, r);
    const timers = new LocalScheduler({ deliver: async () => {} });
    const followUpChannel = recordingFollowUpChannel();
    const put: PutEventsRequestEntry[] = [];
    const handler = senderHandler(
      {
        LIFECYCLE,
        AGENT_CONFIG: JSON.stringify(config),
        LIFECYCLE_BUS_ARN: 'arn:aws:events:us-east-1:1:event-bus/members',
      },
      { store, timers, followUpChannel, putEvents: async (e) => void put.push(...e) },
    );
    return { handler, timers, followUpChannel, put };
  }

  it('sends a due follow-up through the channel, logs it as agent.message_sent from the scheduler, and sets the next step', async () => {
    const { handler, timers, followUpChannel, put } = await setup();
    expect(await handler(due(1, 1))).toMatchObject({ outcome: 'send', followUp: 1 });
    expect(followUpChannel.sent).toEqual([
      {
        entityId: 'member-1',
        followUp: 1,
        version: 1,
        key: `${timerName('follow-up', 'member-1')}:v1:2025-01-06T09:00:00Z:1`,
      },
    ]);
    expect(put).toMatchObject([
      {
        Source: 'stepwise.scheduler',
        DetailType: 'agent.message_sent',
        EventBusName: 'arn:aws:events:us-east-1:1:event-bus/members',
      },
    ]);
    expect(JSON.parse(put[0]!.Detail!)).toEqual({
      memberId: 'member-1',
      eventId: followUpChannel.sent[0]!.key,
      followUp: 1,
    });
    expect(timers.pending).toMatchObject([{ dueAt: '2025-01-11T09:00:00Z', stamp: { version: 1, step: 2 } }]);
    await handler(due(1, 1)); // Scheduler delivers at least once: the channel sends once per key
    expect(followUpChannel.sent).toHaveLength(1);
  });

  it('drops a stale follow-up, and after the last step raises follow_ups.exhausted from the scheduler with the version guard', async () => {
    const { handler, timers, followUpChannel, put } = await setup();
    expect(await handler(due(0, 1))).toMatchObject({ outcome: 'stale' });
    expect(followUpChannel.sent).toEqual([]);
    expect(put).toEqual([]);
    expect(await handler(due(1, 3, '2025-01-18T09:00:00Z'))).toMatchObject({ outcome: 'exhausted' });
    expect(put).toMatchObject([{ Source: 'stepwise.scheduler', DetailType: 'follow_ups.exhausted' }]);
    expect(JSON.parse(put[0]!.Detail!)).toMatchObject({ memberId: 'member-1', expectedVersion: 1 });
    expect(timers.pending).toEqual([]);
  });

  it('refuses anything but a follow_up.due from the lifecycle', async () => {
    const { handler } = await setup();
    await expect(handler({ ...due(1, 1), source: 'stepwise.crm' })).rejects.toThrow(InvalidInputError);
    await expect(handler({ ...due(1, 1), detail: { entityId: 'member-1' } })).rejects.toThrow(
      /follow_up.due event: detail.dueAt/,
    );
  });
});

describe('port adapters', () => {
  const update = crmUpdateOf(changeOf(['agent.message_sent']).change!);

  it('httpCrm POSTs the update as JSON with an idempotency key per version', async () => {
    const calls: [string, RequestInit][] = [];
    const crm = httpCrm('https://crm.test/hook', 'memberId', async (url, init) => {
      calls.push([String(url), init!]);
      return new Response(null, { status: 204 });
    });
    await crm.syncEntityState(update);
    expect(calls).toHaveLength(1);
    const [url, init] = calls[0]!;
    expect(url).toBe('https://crm.test/hook');
    expect(init.method).toBe('POST');
    expect(init.headers).toEqual({ 'content-type': 'application/json', 'idempotency-key': 'member-1:v1' });
    // The CRM gets the member's id under the statechart's entity key.
    const { entityId, ...state } = update;
    expect(JSON.parse(String(init.body))).toEqual({ memberId: entityId, ...state });
  });

  it('httpCrm fails with CrmSyncError on a non-2xx answer or no answer', async () => {
    await expect(
      httpCrm('https://crm.test/hook', 'memberId', async () => new Response('busy', { status: 503 })).syncEntityState(
        update,
      ),
    ).rejects.toThrow(new CrmSyncError('CRM webhook answered 503 for memberId member-1 v1'));
    const down = httpCrm('https://crm.test/hook', 'memberId', async () => {
      throw new TypeError('fetch failed');
    });
    await expect(down.syncEntityState(update)).rejects.toThrow(/CRM webhook unreachable: fetch failed/);
  });

  it('httpFollowUpChannel POSTs the follow-up with its idempotency key; failures are FollowUpSendError', async () => {
    const calls: [string, RequestInit][] = [];
    const message = { entityId: 'member-1', followUp: 2, version: 5, key: 'follow-up-x:v5:2025-01-06T09:00:00Z:2' };
    await httpFollowUpChannel('https://agent.test/follow-up', 'memberId', async (url, init) => {
      calls.push([String(url), init!]);
      return new Response(null, { status: 202 });
    }).sendFollowUp(message);
    expect(calls[0]![1].headers).toEqual({ 'content-type': 'application/json', 'idempotency-key': message.key });
    expect(JSON.parse(String(calls[0]![1].body))).toEqual({
      memberId: 'member-1',
      followUp: 2,
      version: 5,
      key: message.key,
    });
    const busy = httpFollowUpChannel(
      'https://agent.test/follow-up',
      'memberId',
      async () => new Response('busy', { status: 503 }),
    );
    await expect(busy.sendFollowUp(message)).rejects.toThrow(
      new FollowUpSendError('follow-up channel answered 503 for member-1 follow-up 2'),
    );
    await expect(busy.sendFollowUp(message)).rejects.toHaveProperty('name', 'FollowUpSendError');
  });

  it('sesNotifier sends a plain-text email from the verified sender to the team', async () => {
    const ses = mockClient(SESv2Client);
    ses.on(SendEmailCommand).resolves({ MessageId: 'm-1' });
    const notification = notificationFor(def, changeOf(['agent.message_sent', 'conversation.stopped']).change!)!;
    await sesNotifier(new SESv2Client({ region: 'us-east-1' }), 'agent@acme.test', 'sales@acme.test').notify(
      notification,
    );
    const input = ses.commandCalls(SendEmailCommand)[0]!.args[0].input;
    expect(input).toMatchObject({
      FromEmailAddress: 'agent@acme.test',
      Destination: { ToAddresses: ['sales@acme.test'] },
      Content: {
        Simple: { Subject: { Data: 'Member member-1: stopped' }, Body: { Text: { Data: notification.text } } },
      },
    });
    ses.restore();
  });

  const target = {
    groupName: 'stepwise-dev-member-timers',
    roleArn: 'arn:aws:iam::1:role/TimerDelivery',
    busArn: 'arn:aws:events:us-east-1:1:event-bus/members',
    deadLetterArn: 'arn:aws:sqs:us-east-1:1:TimerDeadLetters',
    entityKey: 'memberId',
  };
  const request = (version: number, step = 1, dueAt = '2025-01-08T10:00:00Z') => ({
    name: timerName('follow-up', 'member-1'),
    kind: 'follow-up' as const,
    entityId: 'member-1',
    dueAt,
    stamp: { version, setAt: '2025-01-06T10:00:00Z', step },
    delivery: {
      source: 'stepwise.lifecycle',
      detailType: 'follow_up.due',
      detail: { entityId: 'member-1', dueAt, timer: { version, setAt: '2025-01-06T10:00:00Z', step } },
    },
  });

  it('eventBridgeScheduler creates a one-time schedule: deterministic name, at() in UTC, flexible window off, DLQ and retries, bus target', async () => {
    const scheduler = mockClient(SchedulerClient);
    scheduler
      .on(GetScheduleCommand)
      .rejects(new ResourceNotFoundException({ $metadata: {}, message: 'none', Message: 'none' }));
    scheduler.on(CreateScheduleCommand).resolves({ ScheduleArn: 'arn:s' });
    const now = Date.parse('2025-01-06T10:00:00Z');
    expect(
      await eventBridgeScheduler(new SchedulerClient({ region: 'us-east-1' }), target, () => now).set(request(2)),
    ).toBe('set');
    const input = scheduler.commandCalls(CreateScheduleCommand)[0]!.args[0].input;
    expect(input).toMatchObject({
      Name: timerName('follow-up', 'member-1'),
      GroupName: 'stepwise-dev-member-timers',
      ScheduleExpression: 'at(2025-01-08T10:00:00)',
      ScheduleExpressionTimezone: 'UTC',
      FlexibleTimeWindow: { Mode: 'OFF' },
      ActionAfterCompletion: 'DELETE',
      Target: {
        Arn: target.busArn,
        RoleArn: target.roleArn,
        EventBridgeParameters: { Source: 'stepwise.lifecycle', DetailType: 'follow_up.due' },
        DeadLetterConfig: { Arn: target.deadLetterArn },
        RetryPolicy: { MaximumRetryAttempts: 20, MaximumEventAgeInSeconds: 86400 },
      },
    });
    expect(JSON.parse(input.Target!.Input!)).toMatchObject({ entityId: 'member-1', timer: { version: 2, step: 1 } });
    // A due time already past (a late sender) is moved a minute into the future: Scheduler must still fire it.
    scheduler.resetHistory();
    await eventBridgeScheduler(new SchedulerClient({ region: 'us-east-1' }), target, () =>
      Date.parse('2025-01-09T00:00:00Z'),
    ).set(request(2));
    expect(scheduler.commandCalls(CreateScheduleCommand)[0]!.args[0].input.ScheduleExpression).toBe(
      'at(2025-01-09T00:01:00)',
    );
    scheduler.restore();
  });

  it('eventBridgeScheduler reads a schedule back as the timer that created it (for re-arming)', async () => {
    const scheduler = mockClient(SchedulerClient);
    const r = request(2);
    scheduler.on(GetScheduleCommand).resolves({
      Name: r.name,
      ScheduleExpression: 'at(2025-01-08T10:00:00)',
      Target: {
        Arn: 'a',
        RoleArn: 'r',
        Input: JSON.stringify({ ...r.delivery.detail, timer: r.stamp }),
        EventBridgeParameters: { Source: 'stepwise.lifecycle', DetailType: 'follow_up.due' },
      },
    });
    expect(
      await eventBridgeScheduler(new SchedulerClient({ region: 'us-east-1' }), target, () => 0).get(r.name),
    ).toEqual(r);
    scheduler
      .on(GetScheduleCommand)
      .resolves({ Name: 'other', ScheduleExpression: 'rate(1 day)', Target: { Arn: 'a', RoleArn: 'r', Input: '{}' } });
    expect(
      await eventBridgeScheduler(new SchedulerClient({ region: 'us-east-1' }), target, () => 0).get('other'),
    ).toBeUndefined();
    scheduler.restore();
  });

  it('eventBridgeScheduler replaces an older schedule of the same name, keeps a newer one, and cancels idempotently', async () => {
    const scheduler = mockClient(SchedulerClient);
    const existing = (version: number) => ({
      Name: 'x',
      Target: {
        Arn: 'a',
        RoleArn: 'r',
        Input: JSON.stringify({ timer: { version, setAt: '2025-01-06T10:00:00Z', step: 1 } }),
      },
    });
    const adapter = eventBridgeScheduler(new SchedulerClient({ region: 'us-east-1' }), target, () => 0);
    scheduler.on(GetScheduleCommand).resolves(existing(3));
    expect(await adapter.set(request(2))).toBe('kept');
    expect(scheduler.commandCalls(UpdateScheduleCommand)).toHaveLength(0);
    scheduler.on(GetScheduleCommand).resolves(existing(1));
    scheduler.on(UpdateScheduleCommand).resolves({ ScheduleArn: 'arn:s' });
    expect(await adapter.set(request(2))).toBe('set');
    expect(scheduler.commandCalls(UpdateScheduleCommand)).toHaveLength(1);
    // Created concurrently between the read and the create: replaced.
    scheduler
      .on(GetScheduleCommand)
      .rejects(new ResourceNotFoundException({ $metadata: {}, message: 'none', Message: 'none' }));
    scheduler
      .on(CreateScheduleCommand)
      .rejects(new ConflictException({ $metadata: {}, message: 'exists', Message: 'exists' }));
    expect(await adapter.set(request(4))).toBe('set');
    expect(scheduler.commandCalls(UpdateScheduleCommand)).toHaveLength(2);
    scheduler
      .on(DeleteScheduleCommand)
      .rejects(new ResourceNotFoundException({ $metadata: {}, message: 'none', Message: 'none' }));
    await expect(adapter.cancel('gone')).resolves.toBeUndefined();
    scheduler.on(DeleteScheduleCommand).rejects(new Error('AccessDenied'));
    await expect(adapter.cancel('x')).rejects.toThrow('AccessDenied');
    scheduler.restore();
  });

  it('names schedules within Scheduler limits, apart for members that sanitize alike', () => {
    const name = timerName('follow-up', `crm:member/${'x'.repeat(200)}`);
    expect(name).toMatch(/^[0-9a-zA-Z_.-]{1,64}$/);
    expect(timerName('renewal', 'a:b')).not.toBe(timerName('renewal', 'a/b'));
    expect(timerName('renewal', 'member-1')).toMatch(/^renewal-member-1-[0-9a-f]{12}$/);
  });
});
