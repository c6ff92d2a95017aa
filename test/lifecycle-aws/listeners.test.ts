/** `lead.state_changed`, what each listener derives from it, the listener handlers and the port adapters. */
import { SendEmailCommand, SESv2Client } from '@aws-sdk/client-sesv2';
import { ExecutionAlreadyExists, SFNClient, StartExecutionCommand } from '@aws-sdk/client-sfn';
import { mockClient } from 'aws-sdk-client-mock';
import { describe, expect, it } from 'vitest';
import { CrmSyncError, InvalidInputError } from '../../lambdas/lib/errors.ts';
import { LIFECYCLE_SOURCE, STATE_CHANGED } from '../../lambdas/lifecycle/envelope.ts';
import { createHandler as crmSyncHandler } from '../../lambdas/lifecycle/handlers/crm-sync.ts';
import { createHandler as followUpHandler } from '../../lambdas/lifecycle/handlers/follow-up-scheduler.ts';
import { createHandler as notifierHandler } from '../../lambdas/lifecycle/handlers/notifier.ts';
import { loadAgentConfig, loadLifecycle } from '../../lambdas/lifecycle/loader.ts';
import {
  followUpExecutionName,
  httpCrm,
  recordingCrm,
  recordingFollowUpScheduler,
  recordingNotifier,
  sesNotifier,
  sfnFollowUpScheduler,
} from '../../lambdas/lifecycle/ports.ts';
import type { LeadSnapshot, LifecycleEvent } from '../../lambdas/lifecycle/schema.ts';
import { crmUpdateOf, followUpFor, notificationFor, parseStateChanged, stateChangeOf, type StateChangedDetail } from '../../lambdas/lifecycle/state-changes.ts';
import { applyEvent, initialSnapshot } from '../../lambdas/lifecycle/transition.ts';

const def = loadLifecycle();
const attendMeeting = loadAgentConfig('attend-meeting');

/** Apply events in order from a new lead; returns the change the last one made and the snapshot before it. */
function changeOf(types: string[], config = attendMeeting): { before: LeadSnapshot; change: StateChangedDetail | undefined } {
  let lead = initialSnapshot(def);
  let change: StateChangedDetail | undefined;
  let before = lead;
  types.forEach((type, i) => {
    const event: LifecycleEvent = { id: `e${i + 1}`, leadId: 'lead-1', type, time: `2025-01-06T${String(9 + i).padStart(2, '0')}:00:00Z` };
    const result = applyEvent(def, lead, event, config);
    before = lead;
    change = stateChangeOf(def, lead, result);
    lead = result.snapshot;
  });
  return { before, change };
}

const envelopeOf = (detail: unknown, overrides: Record<string, unknown> = {}) => ({
  version: '0',
  id: 'eb-9',
  'detail-type': STATE_CHANGED,
  source: LIFECYCLE_SOURCE,
  account: '123456789012',
  time: '2025-01-06T12:00:01Z',
  region: 'us-east-1',
  resources: [],
  detail,
  ...overrides,
});

describe('lead.state_changed', () => {
  it('describes a state change with the trigger, the raised events and the follow-up eligibility', () => {
    expect(changeOf(['agent.message_sent', 'lead.message_sent', 'meeting.booked']).change).toEqual({
      leadId: 'lead-1',
      eventId: 'e3',
      eventType: 'meeting.booked',
      at: '2025-01-06T11:00:00Z',
      from: 'engaged',
      to: 'meeting_booked',
      path: 'active.meeting_booked',
      context: { followUpsStopped: true },
      version: 4,
      conversation: 1,
      eventCount: 4,
      canReceiveFollowUp: false,
      raised: ['follow_up.stopped'],
    });
  });

  it('is published for a context-only change, never for an event that changed neither state nor context', () => {
    const stopped = changeOf(['agent.message_sent', 'lead.message_sent', 'link.clicked']).change!;
    expect(stopped).toMatchObject({ from: 'engaged', to: 'engaged', context: { followUpsStopped: true }, raised: ['follow_up.stopped'] });
    expect(changeOf(['agent.message_sent', 'agent.message_sent']).change).toBeUndefined();
    expect(changeOf(['lead.sneezed']).change).toBeUndefined();
    expect(changeOf(['agent.message_sent', 'crm.state_set']).change).toBeUndefined(); // refused: no detail.state
  });

  it('parses only lead.state_changed from the lifecycle, with a complete detail', () => {
    const detail = changeOf(['agent.message_sent']).change!;
    expect(parseStateChanged(envelopeOf(detail))).toEqual(detail);
    expect(() => parseStateChanged(envelopeOf(detail, { source: 'stepwise.crm' }))).toThrow(InvalidInputError);
    expect(() => parseStateChanged(envelopeOf(detail, { 'detail-type': 'meeting.booked' }))).toThrow(/lead\.state_changed event: detail-type/);
    expect(() => parseStateChanged(envelopeOf({ ...detail, version: undefined }))).toThrow(/detail\.version/);
  });

  it('tells the CRM the new position with its version', () => {
    expect(crmUpdateOf(changeOf(['agent.message_sent', 'lead.message_sent']).change!)).toEqual({
      leadId: 'lead-1',
      state: 'engaged',
      path: 'active.lead_qualification.engaged',
      followUpsStopped: false,
      canReceiveFollowUp: true,
      version: 2,
      conversation: 1,
      updatedAt: '2025-01-06T10:00:00Z',
    });
  });

  it('notifies the team on entering a notify state only', () => {
    const booked = notificationFor(changeOf(['agent.message_sent', 'lead.message_sent', 'meeting.booked']).change!);
    expect(booked).toMatchObject({ leadId: 'lead-1', key: 'lead-1:v4', subject: 'Lead lead-1: meeting booked' });
    expect(booked!.text).toContain('Cause: meeting.booked (e3) at 2025-01-06T11:00:00Z (raised: follow_up.stopped).');
    expect(notificationFor(changeOf(['agent.message_sent', 'lead.message_sent']).change!)).toBeUndefined(); // engaged
    expect(notificationFor(changeOf(['agent.message_sent', 'lead.message_sent', 'link.clicked']).change!)).toBeUndefined(); // context only
    expect(notificationFor(changeOf(['agent.message_sent', 'lead.opted_out']).change!)?.subject).toBe('Lead lead-1: opted out');
  });

  it('schedules a follow-up only while the lead can receive one, due the delay after the cause', () => {
    expect(followUpFor(changeOf(['agent.message_sent']).change!, 3600)).toEqual({ leadId: 'lead-1', version: 1, dueAt: '2025-01-06T10:00:00.000Z' });
    expect(followUpFor(changeOf(['agent.message_sent', 'follow_ups.exhausted']).change!, 3600)).toBeUndefined(); // cold
    expect(followUpFor(changeOf(['agent.message_sent', 'lead.message_sent', 'link.clicked']).change!, 3600)).toBeUndefined(); // engaged, stopped
  });
});

describe('listener handlers', () => {
  const engaged = envelopeOf(changeOf(['agent.message_sent', 'lead.message_sent']).change!);
  const cold = envelopeOf(changeOf(['agent.message_sent', 'follow_ups.exhausted']).change!);
  const goal = envelopeOf(changeOf(['agent.message_sent', 'meeting.attended']).change!);

  it('follow-up scheduler: schedules only when canReceiveFollowUp, once per version', async () => {
    const followUps = recordingFollowUpScheduler();
    const handler = followUpHandler({ FOLLOW_UP_DELAY_SECONDS: '172800' }, { followUps });
    expect(await handler(engaged)).toEqual({ scheduled: { leadId: 'lead-1', version: 2, dueAt: '2025-01-08T10:00:00.000Z' } });
    expect(await handler(cold)).toEqual({ scheduled: null });
    await handler(engaged); // a redelivery
    expect(followUps.scheduled).toEqual([{ leadId: 'lead-1', version: 2, dueAt: '2025-01-08T10:00:00.000Z' }]);
  });

  it('CRM sync: records every change, context-only ones included', async () => {
    const crm = recordingCrm();
    const handler = crmSyncHandler({}, { crm });
    await handler(engaged);
    await handler(envelopeOf(changeOf(['agent.message_sent', 'lead.message_sent', 'link.clicked']).change!));
    expect(crm.calls.map((c) => [c.state, c.version, c.followUpsStopped])).toEqual([
      ['engaged', 2, false],
      ['engaged', 3, true],
    ]);
  });

  it('notifier: sends for notify states and ignores the rest', async () => {
    const notifier = recordingNotifier();
    const handler = notifierHandler({}, { notifier });
    expect((await handler(goal)).notified?.subject).toBe('Lead lead-1: goal hit');
    expect(await handler(engaged)).toEqual({ notified: null });
    expect(notifier.sent).toHaveLength(1);
  });

  it('import without their environment and name the missing variable on the first event', async () => {
    await expect(crmSyncHandler({})(engaged)).rejects.toThrow("this function's environment has no CRM_WEBHOOK_URL");
    await expect(notifierHandler({ MAIL_FROM: 'a@example.com' })(goal)).rejects.toThrow('NOTIFY_TO');
    await expect(followUpHandler({ FOLLOW_UP_DELAY_SECONDS: '60' })(engaged)).rejects.toThrow('FOLLOW_UP_TIMER_ARN');
    await expect(followUpHandler({ FOLLOW_UP_DELAY_SECONDS: 'soon' }, { followUps: recordingFollowUpScheduler() })(engaged)).rejects.toThrow(
      /FOLLOW_UP_DELAY_SECONDS must be a whole number/,
    );
    await expect(crmSyncHandler({}, { crm: recordingCrm() })({ source: 'x' })).rejects.toThrow(InvalidInputError);
  });
});

describe('port adapters', () => {
  const update = crmUpdateOf(changeOf(['agent.message_sent']).change!);

  it('httpCrm POSTs the update as JSON with an idempotency key per version', async () => {
    const calls: [string, RequestInit][] = [];
    const crm = httpCrm('https://crm.test/hook', async (url, init) => {
      calls.push([String(url), init!]);
      return new Response(null, { status: 204 });
    });
    await crm.syncLeadState(update);
    expect(calls).toHaveLength(1);
    const [url, init] = calls[0]!;
    expect(url).toBe('https://crm.test/hook');
    expect(init.method).toBe('POST');
    expect(init.headers).toEqual({ 'content-type': 'application/json', 'idempotency-key': 'lead-1:v1' });
    expect(JSON.parse(String(init.body))).toEqual(update);
  });

  it('httpCrm fails with CrmSyncError on a non-2xx answer or no answer', async () => {
    await expect(httpCrm('https://crm.test/hook', async () => new Response('busy', { status: 503 })).syncLeadState(update)).rejects.toThrow(
      new CrmSyncError('CRM webhook answered 503 for lead lead-1 v1'),
    );
    const down = httpCrm('https://crm.test/hook', async () => {
      throw new TypeError('fetch failed');
    });
    await expect(down.syncLeadState(update)).rejects.toThrow(/CRM webhook unreachable: fetch failed/);
  });

  it('sesNotifier sends a plain-text email from the verified sender to the team', async () => {
    const ses = mockClient(SESv2Client);
    ses.on(SendEmailCommand).resolves({ MessageId: 'm-1' });
    const notification = notificationFor(changeOf(['agent.message_sent', 'lead.opted_out']).change!)!;
    await sesNotifier(new SESv2Client({ region: 'us-east-1' }), 'agent@acme.test', 'sales@acme.test').notify(notification);
    const input = ses.commandCalls(SendEmailCommand)[0]!.args[0].input;
    expect(input).toMatchObject({
      FromEmailAddress: 'agent@acme.test',
      Destination: { ToAddresses: ['sales@acme.test'] },
      Content: { Simple: { Subject: { Data: 'Lead lead-1: opted out' }, Body: { Text: { Data: notification.text } } } },
    });
    ses.restore();
  });

  it('sfnFollowUpScheduler starts one timer per (lead, version); a repeat is not an error', async () => {
    const sfn = mockClient(SFNClient);
    sfn.on(StartExecutionCommand).resolvesOnce({ executionArn: 'arn:1', startDate: new Date() }).rejects(new ExecutionAlreadyExists({ $metadata: {}, message: 'exists' }));
    const scheduler = sfnFollowUpScheduler(new SFNClient({ region: 'us-east-1' }), 'arn:aws:states:us-east-1:1:stateMachine:Timer');
    const request = { leadId: 'lead-1', version: 3, dueAt: '2025-01-08T10:00:00.000Z' };
    await scheduler.schedule(request);
    await scheduler.schedule(request);
    const inputs = sfn.commandCalls(StartExecutionCommand).map((c) => c.args[0].input);
    expect(inputs).toHaveLength(2);
    expect(inputs[0]).toEqual({ stateMachineArn: 'arn:aws:states:us-east-1:1:stateMachine:Timer', name: followUpExecutionName(request), input: JSON.stringify(request) });
    sfn.reset();
    sfn.on(StartExecutionCommand).rejects(new Error('AccessDenied'));
    await expect(scheduler.schedule(request)).rejects.toThrow('AccessDenied');
    sfn.restore();
  });

  it('names timer executions within Step Functions limits, apart for leads that sanitize alike', () => {
    const long = { leadId: `crm:lead/${'x'.repeat(200)}`, version: 123456, dueAt: '' };
    const name = followUpExecutionName(long);
    expect(name).toMatch(/^[A-Za-z0-9_-]{1,80}$/);
    expect(name.endsWith('-v123456')).toBe(true);
    expect(followUpExecutionName({ leadId: 'a:b', version: 1, dueAt: '' })).not.toBe(followUpExecutionName({ leadId: 'a/b', version: 1, dueAt: '' }));
  });
});
