/** Goals, follow-up stops and events without a transition, as pure sequences through applyEvent on the fixture lifecycle. */
import { describe, expect, it } from 'vitest';
import { InvalidInputError } from '../../../src/core/errors.ts';
import type { LifecycleEvent } from '../../../src/definitions/lifecycle/schema.ts';
import { initialSnapshot, transition } from '../../../src/runtime/lifecycle/transition.ts';
import { agent, def, NO_GOAL, scriptedMember } from './support.ts';

describe('goals and stops', () => {
  it('a phrase match in the reply that re-engages the member stops follow-ups again at once', () => {
    const member = scriptedMember(agent('close-big'));
    member.send('agent.message_sent');
    member.send('follow_ups.exhausted');
    const reply = member.send('member.message_sent', { text: 'Please CALL ME tomorrow' });
    expect(reply.map((e) => [e.type, e.stateAfter])).toEqual([
      ['member.message_sent', 'engaged'],
      ['follow_up.stopped', 'engaged'],
    ]);
    expect(member.snapshot.context.followUpsStopped).toBe(true);
  });

  it('conditional goal: deal.closed counts only at value >= 10000', () => {
    const member = scriptedMember(agent('close-big'));
    member.send('agent.message_sent');
    member.send('member.message_sent');
    member.send('deal.closed', { value: 5000 });
    expect(member.snapshot.state).toBe('closed');
    member.send('deal.closed', { value: '12000' }); // an upsell on the same deal: logged in closed, meets the goal
    expect(member.snapshot.state).toBe('goal_hit');
    expect(member.types().slice(-2)).toEqual(['deal.closed', 'goal.hit']);
  });

  it('any-of goal: the first of call.booked or deal.closed', () => {
    const member = scriptedMember(agent('either'));
    member.send('member.message_sent');
    member.send('deal.closed');
    expect(member.snapshot.state).toBe('goal_hit');
  });

  it('all-of goal: both events in the same conversation, in any order; progress resets with a new conversation', () => {
    const member = scriptedMember(agent('both'));
    member.send('agent.message_sent');
    member.send('link.clicked', { url: 'https://acme.test/pricing' });
    expect(member.snapshot.progress.matched).toEqual(['goal.0']);
    member.send('conversation.stopped');
    member.send('member.message_sent'); // conversation 2: the click of conversation 1 does not count
    expect(member.snapshot.progress.matched).toEqual([]);
    member.send('call.booked');
    expect(member.snapshot.state).toBe('booked');
    member.send('link.clicked', { url: 'https://acme.test/blog' });
    expect(member.snapshot.state).toBe('booked');
    member.send('link.clicked', { url: 'https://acme.test/pricing?plan=pro' });
    expect(member.snapshot).toMatchObject({ state: 'goal_hit', conversation: 2 });
  });

  it('no goal: the agent works the member indefinitely and goal.hit is never raised', () => {
    const member = scriptedMember(NO_GOAL);
    for (const type of [
      'agent.message_sent',
      'member.message_sent',
      'call.booked',
      'call.attended',
      'deal.closed',
      'renewal.due',
    ])
      member.send(type);
    expect(member.types()).not.toContain('goal.hit');
    expect(member.snapshot.state).toBe('renewal_due');
  });

  it('events with no transition, unknown types included, are logged and never thrown', () => {
    const member = scriptedMember(NO_GOAL);
    member.send('link.clicked');
    const [unknown] = member.send('member.sneezed', { loud: true });
    expect(unknown).toMatchObject({
      type: 'member.sneezed',
      stateBefore: 'idle',
      stateAfter: 'idle',
      detail: { loud: true },
    });
    expect(unknown!.actions).toEqual([{ type: 'refuse', reason: 'unknown event type "member.sneezed"' }]);
    expect(member.snapshot).toMatchObject({ state: 'idle', version: 0, eventCount: 2 });
  });
});

describe('transition', () => {
  const engaged = { ...initialSnapshot(def), state: 'engaged', version: 2, eventCount: 2 };
  const booked: LifecycleEvent = {
    id: 'evt-9',
    entityId: 'member-1',
    type: 'call.booked',
    time: '2025-03-01T10:00:00+01:00',
  };

  it('returns the raised events without applying them', () => {
    const r = transition(def, engaged, booked, agent('either'));
    expect(r.snapshot).toMatchObject({ state: 'booked', version: 3, eventCount: 3 });
    expect(r.actions).toEqual([]);
    expect(r.emitted).toEqual([
      {
        id: 'evt-9:goal.hit',
        entityId: 'member-1',
        type: 'goal.hit',
        time: '2025-03-01T10:00:00+01:00',
        detail: { triggeredBy: 'evt-9' },
      },
    ]);
  });

  it('raises follow_up.stopped before goal.hit when one event does both', () => {
    const config = {
      goal: { event: 'call.booked' as const },
      stopFollowUpsOn: [{ event: 'call.booked' as const }],
    };
    expect(transition(def, engaged, booked, config).emitted.map((e) => e.id)).toEqual([
      'evt-9:follow_up.stopped',
      'evt-9:goal.hit',
    ]);
  });

  it('throws only for input that cannot be logged', () => {
    const bad: [unknown, RegExp][] = [
      [{ ...booked, id: '' }, /lifecycle event: id: /],
      [{ ...booked, entityId: undefined }, /lifecycle event: entityId: /],
      [{ ...booked, time: 'yesterday' }, /lifecycle event: time: /],
      [{ ...booked, detail: 'x' }, /lifecycle event: detail: /],
    ];
    for (const [event, message] of bad) {
      expect(() => transition(def, engaged, event as LifecycleEvent, NO_GOAL)).toThrow(InvalidInputError);
      expect(() => transition(def, engaged, event as LifecycleEvent, NO_GOAL)).toThrow(message);
    }
    expect(() => transition(def, { ...engaged, state: 'active' }, booked, NO_GOAL)).toThrow(
      /snapshot state "active" is not a leaf state of member-journey/,
    );
    expect(() => transition(def, { ...engaged, state: 'constructor' }, booked, NO_GOAL)).toThrow(InvalidInputError);
  });
});
