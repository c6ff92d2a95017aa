/** Every lead flow of the lead lifecycle example, as a pure sequence through applyEvent with its shipped agent configs. */
import { describe, expect, it } from 'vitest';
import { canReceiveFollowUp, entityStatus } from '../../../src/runtime/lifecycle/transition.ts';
import { agent, def, NO_GOAL, scriptedLead } from './support.ts';

describe('the lead flows', () => {
  it('meeting booked as goal: outreach, engaged, booked, goal hit', () => {
    const lead = scriptedLead(agent('book-meeting'));
    lead.send('agent.message_sent');
    expect(lead.snapshot.state).toBe('outreach');
    expect(canReceiveFollowUp(def, lead.snapshot)).toBe(true);
    lead.send('lead.message_sent');
    expect(lead.snapshot.state).toBe('engaged');
    const booked = lead.send('meeting.booked');

    expect(booked.map((e) => [e.id, e.type, e.stateBefore, e.stateAfter])).toEqual([
      ['lead-1-e3', 'meeting.booked', 'engaged', 'meeting_booked'],
      ['lead-1-e3:goal.hit', 'goal.hit', 'meeting_booked', 'goal_hit'],
    ]);
    expect(booked[1]!.detail).toEqual({ triggeredBy: 'lead-1-e3' });
    expect(booked[1]!.time).toBe(booked[0]!.time);
    expect(entityStatus(def, lead.snapshot)).toEqual({
      state: 'goal_hit',
      path: 'goal_hit',
      context: { followUpsStopped: false },
      version: 4,
      conversation: 1,
      eventCount: 4,
    });
    expect(lead.log.map((e) => e.seq)).toEqual([1, 2, 3, 4]);
  });

  it('Sparky revival: follow-ups exhaust, the lead goes cold, replies months later and books', () => {
    const lead = scriptedLead(agent('book-meeting'));
    lead.send('agent.message_sent');
    lead.send('agent.message_sent'); // a follow-up: logged, no transition
    lead.send('follow_ups.exhausted');
    expect(lead.snapshot.state).toBe('cold');
    expect(canReceiveFollowUp(def, lead.snapshot)).toBe(false);
    lead.send('agent.message_sent'); // a revival nudge: cold stays cold until the lead answers
    expect(lead.snapshot.state).toBe('cold');
    lead.send('lead.message_sent', { text: 'Sorry, been busy - still interested' }, '2025-06-01T10:00:00Z');
    expect(lead.snapshot.state).toBe('engaged');
    expect(canReceiveFollowUp(def, lead.snapshot)).toBe(true);
    lead.send('meeting.booked');
    expect(lead.snapshot.state).toBe('goal_hit');
    expect(lead.log.find((e) => e.type === 'lead.message_sent')!.stateBefore).toBe('cold');
    expect(lead.snapshot.version).toBe(5); // outreach, cold, engaged, meeting_booked, goal_hit
    expect(lead.snapshot.eventCount).toBe(7);
  });

  it('no-show rebooking with an attend-meeting goal: missed, re-engaged, rebooked, attended', () => {
    const lead = scriptedLead(agent('attend-meeting'));
    lead.send('agent.message_sent');
    lead.send('lead.message_sent');
    lead.send('meeting.booked');
    expect(lead.snapshot.state).toBe('meeting_booked'); // booking is not this agent's goal
    lead.send('meeting.missed');
    expect(lead.snapshot.state).toBe('no_show');
    lead.send('lead.message_sent');
    expect(lead.snapshot.state).toBe('engaged');
    lead.send('meeting.booked');
    expect(lead.snapshot.state).toBe('meeting_booked');
    lead.send('meeting.attended');
    expect(lead.snapshot.state).toBe('goal_hit');
    expect(lead.log.filter((e) => e.type === 'goal.hit')).toHaveLength(1);
    expect(lead.log.filter((e) => e.type === 'meeting.booked')).toHaveLength(2);
  });

  it('opt-out then re-engagement: the conversation resumes when the lead messages back', () => {
    const lead = scriptedLead(agent('attend-meeting'));
    lead.send('agent.message_sent');
    lead.send('lead.message_sent');
    lead.send('lead.opted_out');
    expect(lead.snapshot.state).toBe('opted_out');
    expect(canReceiveFollowUp(def, lead.snapshot)).toBe(false);
    lead.send('agent.message_sent'); // must not move an opted-out lead
    expect(lead.snapshot.state).toBe('opted_out');
    lead.send('lead.message_sent', { text: 'Actually, can we talk next week?' });
    expect(lead.snapshot).toMatchObject({ state: 'engaged', conversation: 1, context: { followUpsStopped: false } });
    expect(canReceiveFollowUp(def, lead.snapshot)).toBe(true);
  });

  it('follow-up reset on re-engagement: booked (stops follow-ups), no-show, re-engages, follow-ups resume', () => {
    const lead = scriptedLead(agent('attend-meeting'));
    lead.send('agent.message_sent');
    lead.send('lead.message_sent');
    const booked = lead.send('meeting.booked');
    expect(booked.map((e) => e.type)).toEqual(['meeting.booked', 'follow_up.stopped']);
    expect(booked[1]!.actions).toEqual([{ type: 'stopFollowUps' }]);
    expect(lead.snapshot.context.followUpsStopped).toBe(true);
    lead.send('meeting.missed');
    expect(lead.snapshot.state).toBe('no_show');
    expect(canReceiveFollowUp(def, lead.snapshot)).toBe(false);
    const back = lead.send('lead.message_sent');
    expect(back).toHaveLength(1);
    expect(back[0]!.actions).toEqual([{ type: 'clearFollowUpStop' }]);
    expect(lead.snapshot).toMatchObject({ state: 'engaged', context: { followUpsStopped: false } });
    expect(canReceiveFollowUp(def, lead.snapshot)).toBe(true);
  });

  it('follow-ups stopped by a link click while engaged stay stopped until the lead re-enters engaged', () => {
    const lead = scriptedLead(agent('attend-meeting'));
    lead.send('agent.message_sent');
    lead.send('lead.message_sent');
    lead.send('link.clicked', { url: 'https://example.com/book' });
    expect(lead.types().slice(-2)).toEqual(['link.clicked', 'follow_up.stopped']);
    expect(canReceiveFollowUp(def, lead.snapshot)).toBe(false);
    lead.send('lead.message_sent'); // already engaged: no re-entry, follow-ups stay stopped
    expect(canReceiveFollowUp(def, lead.snapshot)).toBe(false);
    lead.send('link.clicked'); // already stopped: nothing more is raised
    expect(lead.types().filter((t) => t === 'follow_up.stopped')).toHaveLength(1);
  });

  it('CRM override: the CRM places the lead in any leaf; an invalid state is logged and refused', () => {
    const lead = scriptedLead(NO_GOAL);
    lead.send('agent.message_sent');
    lead.send('crm.state_set', { state: 'meeting_attended' });
    expect(lead.snapshot.state).toBe('meeting_attended');
    const version = lead.snapshot.version;

    for (const detail of [{ state: 'hot' }, { state: 'active' }, { state: 42 }, undefined]) {
      const [logged] = lead.send('crm.state_set', detail);
      expect(logged!.stateAfter).toBe('meeting_attended');
      expect(logged!.actions).toEqual([
        { type: 'refuse', reason: expect.stringMatching(/^crm\.state_set: detail\.state /) },
      ]);
    }
    expect(lead.log.at(-1)!.actions).toEqual([{ type: 'refuse', reason: 'crm.state_set: detail.state is missing' }]);
    expect(lead.log.at(-4)!.actions).toEqual([
      { type: 'refuse', reason: 'crm.state_set: detail.state "hot" is not a leaf state of lead-lifecycle' },
    ]);
    expect(lead.snapshot.version).toBe(version);

    lead.send('crm.state_set', { state: 'meeting_attended' }); // an echo of our own sync: no transition
    expect(lead.snapshot.version).toBe(version);
    lead.send('crm.state_set', { state: 'cold' }); // backwards too: the CRM is the source of truth
    expect(lead.snapshot).toMatchObject({ state: 'cold', version: version + 1, conversation: 1 });
  });

  it('non-goal termination: the client takes over when the lead goes cold', () => {
    const lead = scriptedLead(agent('book-meeting'));
    lead.send('agent.message_sent');
    lead.send('follow_ups.exhausted');
    lead.send('conversation.stopped', { reason: 'client took over' });
    expect(lead.snapshot.state).toBe('conversation_stopped');
    lead.send('meeting.booked'); // the goal event after the end: logged, no goal.hit
    expect(lead.snapshot.state).toBe('conversation_stopped');
    expect(lead.types()).not.toContain('goal.hit');
    expect(lead.log.at(-1)).toMatchObject({
      type: 'meeting.booked',
      stateBefore: 'conversation_stopped',
      stateAfter: 'conversation_stopped',
      actions: [],
    });
  });

  it('human intervention to deal: a human takes over and closes via the CRM; every event is logged', () => {
    const lead = scriptedLead(agent('book-meeting'));
    lead.send('agent.message_sent');
    lead.send('lead.message_sent');
    lead.send('conversation.stopped', { reason: 'human intervention' });
    lead.send('deal.closed', { value: 5000 });
    expect(lead.snapshot).toMatchObject({ state: 'conversation_stopped', conversation: 1 });
    const [set] = lead.send('crm.state_set', { state: 'deal_closed' });
    // Leaving a terminal state always starts the next conversation.
    expect(set).toMatchObject({ conversation: 2, stateBefore: 'conversation_stopped', stateAfter: 'deal_closed' });
    expect(set!.actions).toEqual([{ type: 'startConversation', conversation: 2 }]);
    lead.send('renewal.due');
    expect(lead.snapshot.state).toBe('renewal_due');
    expect(lead.types()).toEqual([
      'agent.message_sent',
      'lead.message_sent',
      'conversation.stopped',
      'deal.closed',
      'crm.state_set',
      'renewal.due',
    ]);
  });

  it('human closes the deal while the agent is still working the lead', () => {
    const lead = scriptedLead(agent('book-meeting'));
    lead.send('agent.message_sent');
    lead.send('lead.message_sent');
    lead.send('deal.closed', { value: 8000, closedBy: 'human' });
    expect(lead.snapshot).toMatchObject({ state: 'deal_closed', conversation: 1 });
  });

  it('re-entry after goal (upsell): conversation 2 starts fresh and keeps the history of conversation 1', () => {
    const lead = scriptedLead(agent('book-meeting'));
    lead.send('agent.message_sent');
    lead.send('lead.message_sent');
    lead.send('link.clicked');
    lead.send('callback.received');
    expect(lead.snapshot.context.followUpsStopped).toBe(true);
    lead.send('meeting.booked');
    expect(lead.snapshot).toMatchObject({ state: 'goal_hit', conversation: 1 });

    const [restart] = lead.send('agent.message_sent');
    expect(restart).toMatchObject({ conversation: 2, stateBefore: 'goal_hit', stateAfter: 'outreach' });
    expect(restart!.actions).toEqual([{ type: 'startConversation', conversation: 2 }]);
    expect(lead.snapshot).toMatchObject({
      state: 'outreach',
      conversation: 2,
      context: { followUpsStopped: false },
      progress: { matched: [] },
    });
    lead.send('lead.message_sent');
    lead.send('deal.closed', { value: 2500 });
    expect(lead.snapshot).toMatchObject({ state: 'deal_closed', conversation: 2 });

    expect(lead.log.filter((e) => e.conversation === 1).map((e) => e.type)).toEqual([
      'agent.message_sent',
      'lead.message_sent',
      'link.clicked',
      'callback.received',
      'follow_up.stopped',
      'meeting.booked',
      'goal.hit',
    ]);
    expect(lead.snapshot.eventCount).toBe(lead.log.length);
    expect(entityStatus(def, lead.snapshot)).toMatchObject({
      conversation: 2,
      eventCount: 10,
      path: 'active.deal_closed',
    });
  });

  it('re-entry by the lead: a reply after conversation_stopped starts conversation 2 in engaged', () => {
    const lead = scriptedLead(agent('attend-meeting'));
    lead.send('agent.message_sent');
    lead.send('conversation.stopped');
    lead.send('lead.message_sent');
    expect(lead.snapshot).toMatchObject({ state: 'engaged', conversation: 2, version: 3 });
    expect(lead.log.at(-1)!.actions).toEqual([
      { type: 'startConversation', conversation: 2 },
      { type: 'clearFollowUpStop' },
    ]);
  });

  it('renewals: the agent works the same lead for renewal without a new conversation', () => {
    const lead = scriptedLead(agent('nurture'));
    for (const type of ['agent.message_sent', 'lead.message_sent', 'meeting.booked', 'meeting.attended', 'deal.closed'])
      lead.send(type);
    expect(lead.snapshot.state).toBe('deal_closed');
    lead.send('renewal.due', undefined, '2026-01-06T09:00:00Z');
    expect(lead.snapshot.state).toBe('renewal_due');
    lead.send('agent.message_sent');
    expect(lead.snapshot.state).toBe('renewal_outreach');
    expect(canReceiveFollowUp(def, lead.snapshot)).toBe(false); // renewal messaging is not the qualification follow-up
    lead.send('lead.message_sent');
    expect(lead.snapshot.state).toBe('renewal_engaged');
    lead.send('deal.closed', { value: 12000 });
    expect(lead.snapshot).toMatchObject({ state: 'deal_closed', conversation: 1 });
    expect(lead.log.map((e) => e.stateAfter)).toEqual([
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

  it('payments: meeting attended, payment initiated, payment completed closes the deal', () => {
    const lead = scriptedLead(agent('nurture'));
    for (const type of ['agent.message_sent', 'lead.message_sent', 'meeting.booked', 'meeting.attended'])
      lead.send(type);
    lead.send('payment.initiated', { amount: 900 });
    expect(lead.snapshot.state).toBe('payment_pending');
    lead.send('payment.initiated', { amount: 900 }); // a retry of the checkout: logged only
    expect(lead.snapshot.state).toBe('payment_pending');
    lead.send('payment.completed', { amount: 900 });
    expect(lead.snapshot.state).toBe('deal_closed');
    lead.send('payment.initiated', { invoice: 'INV-2' }); // after the close: logged, the deal stays closed
    expect(lead.snapshot.state).toBe('deal_closed');
    expect(lead.snapshot.version).toBe(6);
  });
});
