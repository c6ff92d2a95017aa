/**
 * Every lead flow of the lead lifecycle, replayed from its sample file through the local leads
 * bus, the generated Express state machine and DynamoDB Local — the same path as on AWS — with
 * the final state, context, event log and listener effects asserted.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STATEMACHINES_DIR } from '../../../src/core/paths.ts';
import { loadAgentConfig, loadLifecycle } from '../../../src/definitions/lifecycle/loader.ts';
import { sessionDynamoDb } from '../../../src/local/cloud/dynamodb-connection.ts';
import type { DynamoDbLocal } from '../../../src/local/cloud/dynamodb-local.ts';
import { LifecycleSession, parseReplayFile } from '../../../src/local/sessions/lifecycle-session.ts';
import { type EntityHistory, entityHistory } from '../../../src/runtime/lifecycle/queries.ts';
import { loggedIn } from '../../../src/runtime/lifecycle/reporting.ts';

const SAMPLES = join(STATEMACHINES_DIR, 'lead-lifecycle', 'samples');
let ddb: DynamoDbLocal;

beforeAll(async () => {
  ddb = await sessionDynamoDb();
});
afterAll(() => ddb?.stop());

/** The follow-up timers the session's scheduler set, in order. */
const followUpSets = (session: LifecycleSession) =>
  session.scheduler.calls.flatMap((c) => (c.op === 'set' && c.request.kind === 'follow-up' ? [c.request] : []));

/** Replay a sample with an agent config; returns the lead's history and the session (stopped). */
async function replaySample(
  sample: string,
  agent: string,
  leadId: string,
): Promise<{ lead: EntityHistory; session: LifecycleSession }> {
  const parsed = parseReplayFile(readFileSync(join(SAMPLES, sample), 'utf8'), loadLifecycle('lead-lifecycle'));
  expect(parsed.malformed).toEqual([]);
  const session = await LifecycleSession.start({
    lifecycle: 'lead-lifecycle',
    dynamo: ddb,
    agentConfig: loadAgentConfig(agent, 'lead-lifecycle'),
  });
  try {
    // Clock lines (timers-year.jsonl) drive the emulated scheduler; the other samples have none.
    await session.replay(parsed.timeline, { clock: parsed.timeline.length > parsed.events.length });
  } finally {
    await session.stop();
  }
  expect(session.failedExecutions).toEqual([]);
  expect(session.sentDeadLetters).toEqual([]);
  expect(session.listenerDeadLetters).toEqual([]);
  const lead = (await entityHistory(session.store, session.definition, leadId))!;
  // The log is gap-free, and the CRM heard the final state.
  expect(lead.events.map((e) => e.seq)).toEqual(lead.events.map((_, i) => i + 1));
  expect(session.crm.calls.at(-1)).toMatchObject({ entityId: leadId, state: lead.state, version: lead.version });
  return { lead, session };
}

/** `type stateBefore>stateAfter` per logged event. */
const trail = (lead: EntityHistory) => lead.events.map((e) => `${e.type} ${e.stateBefore}>${e.stateAfter}`);

describe('the lead flows over the local bus and DynamoDB Local', () => {
  it('meeting booked as goal: outreach, reply (delivered twice, logged once), booked, goal hit', async () => {
    const { lead, session } = await replaySample('meeting-booked-as-goal.jsonl', 'book-meeting', 'lead-meeting-goal');
    expect(lead).toMatchObject({
      state: 'goal_hit',
      path: 'goal_hit',
      context: { followUpsStopped: false },
      version: 4,
      conversation: 1,
      eventCount: 4,
    });
    expect(trail(lead)).toEqual([
      'agent.message_sent idle>outreach',
      'lead.message_sent outreach>engaged',
      'meeting.booked engaged>meeting_booked',
      'goal.hit meeting_booked>goal_hit',
    ]);
    expect(lead.events[3]).toMatchObject({
      id: 'mb-3:goal.hit',
      detail: { triggeredBy: 'mb-3' },
      time: '2025-01-07T14:00:00Z',
    });
    expect(lead.events[2]!.detail).toEqual({ calendar: 'sales' });
    expect(session.duplicates).toBe(1);
    expect(session.crm.calls.map((c) => [c.state, c.version])).toEqual([
      ['outreach', 1],
      ['engaged', 2],
      ['goal_hit', 4],
    ]);
    expect(session.notifier.sent.map((n) => n.subject)).toEqual(['Lead lead-meeting-goal: goal hit']);
    // The follow-up chain was set while the lead could receive follow-ups (v1, v2), and cancelled once it could not.
    expect(followUpSets(session).map((r) => r.stamp.version)).toEqual([1, 2]);
    expect(session.scheduler.pending).toEqual([]);
  });

  it('Sparky revival: follow-ups exhaust, the lead goes cold, replies months later and books', async () => {
    const { lead } = await replaySample('sparky-revival.jsonl', 'book-meeting', 'lead-sparky');
    expect(lead).toMatchObject({ state: 'goal_hit', version: 5, conversation: 1, eventCount: 7 });
    expect(trail(lead)).toEqual([
      'agent.message_sent idle>outreach',
      'agent.message_sent outreach>outreach',
      'follow_ups.exhausted outreach>cold',
      'agent.message_sent cold>cold',
      'lead.message_sent cold>engaged',
      'meeting.booked engaged>meeting_booked',
      'goal.hit meeting_booked>goal_hit',
    ]);
    expect(loggedIn(lead.events, 'lead.message_sent', 'cold')).toEqual(['lead-sparky']);
  });

  it('no-show rebooking with an attend-meeting goal: missed, re-engaged, rebooked, attended', async () => {
    const { lead, session } = await replaySample('no-show-rebooking.jsonl', 'attend-meeting', 'lead-no-show');
    expect(lead).toMatchObject({
      state: 'goal_hit',
      context: { followUpsStopped: true },
      version: 10,
      conversation: 1,
      eventCount: 10,
    });
    expect(lead.events.filter((e) => e.type === 'meeting.booked')).toHaveLength(2);
    expect(lead.events.filter((e) => e.type === 'goal.hit').map((e) => e.id)).toEqual(['ns-7:goal.hit']);
    expect(lead.events.find((e) => e.id === 'ns-5')).toMatchObject({
      stateBefore: 'no_show',
      stateAfter: 'engaged',
      actions: [{ type: 'clearFollowUpStop' }],
    });
    expect(session.notifier.sent.map((n) => n.subject.replace('Lead lead-no-show: ', ''))).toEqual([
      'meeting booked',
      'no show',
      'meeting booked',
      'goal hit',
    ]);
  });

  it('opt-out then re-engagement: the conversation resumes when the lead messages back', async () => {
    const { lead, session } = await replaySample('opt-out-then-re-engagement.jsonl', 'attend-meeting', 'lead-opt-out');
    expect(lead).toMatchObject({
      state: 'engaged',
      path: 'active.lead_qualification.engaged',
      context: { followUpsStopped: false },
      version: 4,
      conversation: 1,
      eventCount: 5,
    });
    expect(trail(lead).slice(2)).toEqual([
      'lead.opted_out engaged>opted_out',
      'agent.message_sent opted_out>opted_out',
      'lead.message_sent opted_out>engaged',
    ]);
    expect(session.notifier.sent.map((n) => n.subject)).toEqual(['Lead lead-opt-out: opted out']);
    expect(session.scheduler.pending).toMatchObject([
      { kind: 'follow-up', stamp: { version: 4, step: 1 }, dueAt: '2025-02-05T16:00:00Z' },
    ]);
  });

  it('follow-up reset on re-engagement: booked (stops follow-ups), no-show, re-engages, follow-ups resume', async () => {
    const { lead, session } = await replaySample('follow-up-reset.jsonl', 'attend-meeting', 'lead-follow-up-reset');
    expect(lead).toMatchObject({ state: 'engaged', context: { followUpsStopped: false }, version: 6, eventCount: 6 });
    expect(trail(lead)).toEqual([
      'agent.message_sent idle>outreach',
      'lead.message_sent outreach>engaged',
      'meeting.booked engaged>meeting_booked',
      'follow_up.stopped meeting_booked>meeting_booked',
      'meeting.missed meeting_booked>no_show',
      'lead.message_sent no_show>engaged',
    ]);
    expect(session.crm.calls.map((c) => [c.state, c.followUpsStopped, c.canReceiveFollowUp])).toEqual([
      ['outreach', false, true],
      ['engaged', false, true],
      ['meeting_booked', true, false],
      ['no_show', true, false],
      ['engaged', false, true],
    ]);
    // Scheduled while eligible only: outreach (v1), engaged (v2), engaged again (v6).
    expect(followUpSets(session).map((r) => r.stamp.version)).toEqual([1, 2, 6]);
  });

  it('CRM override: the CRM places the lead forwards and backwards; an invalid state is refused, an echo changes nothing', async () => {
    const { lead, session } = await replaySample('crm-override.jsonl', 'nurture', 'lead-crm-override');
    expect(lead).toMatchObject({ state: 'cold', version: 3, conversation: 1, eventCount: 5 });
    expect(lead.events.map((e) => [e.id, e.stateAfter, e.actions])).toEqual([
      ['co-1', 'outreach', []],
      ['co-2', 'meeting_attended', []],
      [
        'co-3',
        'meeting_attended',
        [{ type: 'refuse', reason: 'crm.state_set: detail.state "hot" is not a leaf state of lead-lifecycle' }],
      ],
      ['co-4', 'meeting_attended', []],
      ['co-5', 'cold', []],
    ]);
    expect(session.crm.calls.map((c) => c.version)).toEqual([1, 2, 3]);
  });

  it('non-goal termination: the client takes over when the lead goes cold; a later booking is only logged', async () => {
    const { lead, session } = await replaySample('non-goal-termination.jsonl', 'book-meeting', 'lead-handoff');
    expect(lead).toMatchObject({ state: 'conversation_stopped', version: 3, eventCount: 4 });
    expect(trail(lead).at(-1)).toBe('meeting.booked conversation_stopped>conversation_stopped');
    expect(lead.events.map((e) => e.type)).not.toContain('goal.hit');
    expect(session.notifier.sent.map((n) => n.subject)).toEqual(['Lead lead-handoff: conversation stopped']);
  });

  it('human intervention to deal: a human takes over and closes via the CRM; every event is logged', async () => {
    const { lead } = await replaySample('human-intervention-to-deal.jsonl', 'book-meeting', 'lead-human-deal');
    expect(lead).toMatchObject({ state: 'renewal_due', version: 5, conversation: 2, eventCount: 6 });
    expect(lead.events.map((e) => e.type)).toEqual([
      'agent.message_sent',
      'lead.message_sent',
      'conversation.stopped',
      'deal.closed',
      'crm.state_set',
      'renewal.due',
    ]);
    expect(lead.events[4]).toMatchObject({
      conversation: 2,
      stateBefore: 'conversation_stopped',
      stateAfter: 'deal_closed',
      actions: [{ type: 'startConversation', conversation: 2 }],
    });
  });

  it('re-entry after goal (upsell): conversation 2 starts fresh and keeps the history of conversation 1', async () => {
    const { lead } = await replaySample('re-entry-after-goal.jsonl', 'book-meeting', 'lead-upsell');
    expect(lead).toMatchObject({
      state: 'deal_closed',
      path: 'active.deal_closed',
      context: { followUpsStopped: false },
      conversation: 2,
      eventCount: 10,
    });
    expect(lead.events.filter((e) => e.conversation === 1).map((e) => e.type)).toEqual([
      'agent.message_sent',
      'lead.message_sent',
      'link.clicked',
      'callback.received',
      'follow_up.stopped',
      'meeting.booked',
      'goal.hit',
    ]);
    expect(lead.events.filter((e) => e.conversation === 2).map((e) => `${e.type} ${e.stateAfter}`)).toEqual([
      'agent.message_sent outreach',
      'lead.message_sent engaged',
      'deal.closed deal_closed',
    ]);
  });

  it('renewals: the agent works the same lead for renewal without a new conversation', async () => {
    const { lead } = await replaySample('renewals.jsonl', 'nurture', 'lead-renewal');
    expect(lead).toMatchObject({ state: 'deal_closed', version: 9, conversation: 1, eventCount: 9 });
    expect(lead.events.map((e) => e.stateAfter)).toEqual([
      'outreach',
      'engaged',
      'meeting_booked',
      'meeting_attended',
      'deal_closed',
      'renewal_due',
      'renewal_outreach',
      'renewal_engaged',
      'deal_closed',
    ]);
  });

  it('payments: meeting attended, payment initiated, payment completed closes the deal; a later invoice does not reopen it', async () => {
    const { lead } = await replaySample('payments.jsonl', 'nurture', 'lead-payment');
    expect(lead).toMatchObject({ state: 'deal_closed', version: 6, conversation: 1, eventCount: 8 });
    expect(trail(lead).slice(4)).toEqual([
      'payment.initiated meeting_attended>payment_pending',
      'payment.initiated payment_pending>payment_pending',
      'payment.completed payment_pending>deal_closed',
      'payment.initiated deal_closed>deal_closed',
    ]);
  });

  it('time passing (clock lines): follow-ups, cold, revived, closed, renewal.due a year on, all from the timers', async () => {
    const { lead, session } = await replaySample('timers-year.jsonl', 'nurture', 'lead-year');
    expect(lead).toMatchObject({ state: 'renewal_due', version: 9, conversation: 1, eventCount: 11 });
    expect(trail(lead).slice(5)).toEqual([
      'agent.message_sent engaged>engaged',
      'agent.message_sent engaged>engaged',
      'follow_ups.exhausted engaged>cold',
      'lead.message_sent cold>engaged',
      'deal.closed engaged>deal_closed',
      'renewal.due deal_closed>renewal_due',
    ]);
    expect(session.followUpChannel.sent.map((m) => m.followUp)).toEqual([1, 2]);
    expect(session.scheduler.pending).toEqual([]);
  });
});
