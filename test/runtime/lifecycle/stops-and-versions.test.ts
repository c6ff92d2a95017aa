/**
 * Configured conversation stops ("a member that goes cold with no Sparky is handed off"), versioned CRM
 * sets (a late CRM echo never moves a member back) and stale time-based events (`expectedVersion`).
 */
import { describe, expect, it } from 'vitest';
import { DefinitionError } from '../../../src/core/errors.ts';
import { AgentConfigSchema } from '../../../src/definitions/lifecycle/agent-config.ts';
import { checkAgentConfig } from '../../../src/definitions/lifecycle/loader.ts';
import { def, scriptedMember } from './support.ts';

const handOffCold = AgentConfigSchema.parse({
  goal: { event: 'call.booked' },
  stopConversationOn: [{ state: 'cold', sparky: false }],
  sparky: false,
});
const withSparky = { ...handOffCold, sparky: true };

describe('configured conversation stops', () => {
  it('a member that goes cold with no Sparky is handed off (conversation.stopped, raised once)', () => {
    const member = scriptedMember(handOffCold);
    member.send('agent.message_sent');
    const cold = member.send('follow_ups.exhausted');
    expect(cold.map((e) => [e.id, e.type, e.stateBefore, e.stateAfter])).toEqual([
      ['member-1-e2', 'follow_ups.exhausted', 'outreach', 'cold'],
      ['member-1-e2:conversation.stopped', 'conversation.stopped', 'cold', 'stopped'],
    ]);
    expect(cold[1]!.detail).toEqual({ triggeredBy: 'member-1-e2' });
    expect(member.snapshot.state).toBe('stopped');
    // A later reply starts conversation 2, which is not stopped until it goes cold again.
    member.send('member.message_sent');
    expect(member.snapshot).toMatchObject({ state: 'engaged', conversation: 2 });
  });

  it('with Sparky enabled the same member stays cold and a reply revives it', () => {
    const member = scriptedMember(withSparky);
    member.send('agent.message_sent');
    member.send('follow_ups.exhausted');
    expect(member.snapshot.state).toBe('cold');
    expect(member.types()).not.toContain('conversation.stopped');
    member.send('member.message_sent');
    expect(member.snapshot).toMatchObject({ state: 'engaged', conversation: 1 });
  });

  it('the goal wins over a stop that holds for the same event', () => {
    const config = AgentConfigSchema.parse({
      goal: { event: 'call.booked' },
      stopConversationOn: [{ event: 'call.booked' }],
    });
    const member = scriptedMember(config);
    member.send('member.message_sent');
    expect(member.send('call.booked').map((e) => e.type)).toEqual(['call.booked', 'goal.hit']);
    expect(member.snapshot.state).toBe('goal_hit');
  });

  it('condition states must exist', () => {
    const typo = AgentConfigSchema.parse({ stopConversationOn: [{ anyOf: [{ state: 'colt' }] }] });
    expect(() => checkAgentConfig(typo, def, 'agent x')).toThrow(DefinitionError);
    expect(() => checkAgentConfig(typo, def, 'agent x')).toThrow(
      'agent x: stopConversationOn.0.anyOf.0.state: "colt" is not a state of member-journey',
    );
  });
});

describe('versioned CRM sets', () => {
  it('refuses a crm.state_set based on an older version, logged with the reason; the member stays', () => {
    const member = scriptedMember(AgentConfigSchema.parse({}));
    member.send('member.message_sent'); // v1 engaged
    member.send('call.booked'); // v2 booked: the CRM sync sends version 2
    member.send('call.missed'); // v3 no_show
    const late = member.send('crm.state_set', { state: 'booked', version: 2 });
    expect(late).toHaveLength(1);
    expect(late[0]).toMatchObject({
      stateBefore: 'no_show',
      stateAfter: 'no_show',
      actions: [{ type: 'refuse', reason: "crm.state_set: based on version 2, older than the member's version 3" }],
    });
    expect(member.snapshot).toMatchObject({ state: 'no_show', version: 3, eventCount: 4 });
  });

  it('applies a set based on the current version, and an unversioned set as before', () => {
    const member = scriptedMember(AgentConfigSchema.parse({}));
    member.send('member.message_sent'); // v1
    member.send('crm.state_set', { state: 'booked', version: 1 });
    expect(member.snapshot).toMatchObject({ state: 'booked', version: 2 });
    member.send('crm.state_set', { state: 'closed' });
    expect(member.snapshot).toMatchObject({ state: 'closed', version: 3 });
  });

  it('refuses a version that is not a whole number, and does not evaluate conditions for refused sets', () => {
    const config = AgentConfigSchema.parse({ goal: { event: 'crm.state_set' } });
    const member = scriptedMember(config);
    member.send('member.message_sent');
    for (const version of ['1', 1.5, -1, null]) {
      const [e, ...raised] = member.send('crm.state_set', { state: 'cold', version });
      expect(e!.actions[0]).toMatchObject({ type: 'refuse' });
      expect(raised).toEqual([]);
    }
    expect(member.snapshot.state).toBe('engaged');
  });
});

describe("CRM sets ordered by the CRM's own time", () => {
  it('refuses a set older than the newest applied one, applies equal or newer ones, and keeps the time across conversations', () => {
    const member = scriptedMember(AgentConfigSchema.parse({}));
    member.send('crm.state_set', { state: 'booked', crmUpdatedAt: '2025-01-06T10:00:00Z' });
    expect(member.snapshot).toMatchObject({ state: 'booked', placedAt: '2025-01-06T10:00:00Z' });
    const late = member.send('crm.state_set', { state: 'engaged', crmUpdatedAt: '2025-01-06T09:59:59Z' });
    expect(late[0]!.actions).toEqual([
      {
        type: 'refuse',
        reason:
          'crm.state_set: detail.crmUpdatedAt 2025-01-06T09:59:59Z is older than the newest one applied (2025-01-06T10:00:00Z)',
      },
    ]);
    expect(member.snapshot.state).toBe('booked');
    member.send('crm.state_set', { state: 'goal_hit', crmUpdatedAt: '2025-01-06T10:00:00Z' });
    member.send('crm.state_set', { state: 'engaged', crmUpdatedAt: '2025-01-07T10:00:00+01:00' });
    expect(member.snapshot).toMatchObject({ state: 'engaged', conversation: 2, placedAt: '2025-01-07T10:00:00+01:00' });
    expect(member.send('crm.state_set', { state: 'cold', crmUpdatedAt: 'yesterday' })[0]!.actions[0]).toMatchObject({
      type: 'refuse',
    });
    // An invalid target is refused and does not move the CRM's clock.
    member.send('crm.state_set', { state: 'hot', crmUpdatedAt: '2025-02-01T00:00:00Z' });
    expect(member.snapshot.placedAt).toBe('2025-01-07T10:00:00+01:00');
  });
});

describe('stale time-based events', () => {
  it('a timer event whose expectedVersion is not the member version is logged and ignored', () => {
    const member = scriptedMember(AgentConfigSchema.parse({}));
    member.send('agent.message_sent'); // v1 outreach
    member.send('member.message_sent'); // v2 engaged
    const stale = member.send('follow_ups.exhausted', { expectedVersion: 1 });
    expect(stale[0]).toMatchObject({
      stateAfter: 'engaged',
      actions: [{ type: 'refuse', reason: 'stale: expected version 1, the member is at version 2' }],
    });
    member.send('follow_ups.exhausted', { expectedVersion: 2 });
    expect(member.snapshot.state).toBe('cold');
  });
});
