/**
 * Configured conversation stops ("a lead that goes cold with no Sparky is handed off"), versioned CRM
 * sets (a late CRM echo never moves a lead back) and stale time-based events (`expectedVersion`).
 */
import { describe, expect, it } from 'vitest';
import { DefinitionError } from '../../../src/core/errors.ts';
import { AgentConfigSchema } from '../../../src/definitions/lifecycle/agent-config.ts';
import { checkAgentConfig, loadAgentConfig } from '../../../src/definitions/lifecycle/loader.ts';
import { def, scriptedLead } from './support.ts';

const handOffCold = AgentConfigSchema.parse({
  goal: { event: 'meeting.booked' },
  stopConversationOn: [{ state: 'cold', sparky: false }],
  sparky: false,
});
const withSparky = { ...handOffCold, sparky: true };

describe('configured conversation stops', () => {
  it('a lead that goes cold with no Sparky is handed off (conversation.stopped, raised once)', () => {
    const lead = scriptedLead(handOffCold);
    lead.send('agent.message_sent');
    const cold = lead.send('follow_ups.exhausted');
    expect(cold.map((e) => [e.id, e.type, e.stateBefore, e.stateAfter])).toEqual([
      ['lead-1-e2', 'follow_ups.exhausted', 'outreach', 'cold'],
      ['lead-1-e2:conversation.stopped', 'conversation.stopped', 'cold', 'conversation_stopped'],
    ]);
    expect(cold[1]!.detail).toEqual({ triggeredBy: 'lead-1-e2' });
    expect(lead.snapshot.state).toBe('conversation_stopped');
    // A later reply starts conversation 2, which is not stopped until it goes cold again.
    lead.send('lead.message_sent');
    expect(lead.snapshot).toMatchObject({ state: 'engaged', conversation: 2 });
  });

  it('with Sparky enabled the same lead stays cold and a reply revives it', () => {
    const lead = scriptedLead(withSparky);
    lead.send('agent.message_sent');
    lead.send('follow_ups.exhausted');
    expect(lead.snapshot.state).toBe('cold');
    expect(lead.types()).not.toContain('conversation.stopped');
    lead.send('lead.message_sent');
    expect(lead.snapshot).toMatchObject({ state: 'engaged', conversation: 1 });
  });

  it('the goal wins over a stop that holds for the same event', () => {
    const config = AgentConfigSchema.parse({
      goal: { event: 'meeting.booked' },
      stopConversationOn: [{ event: 'meeting.booked' }],
    });
    const lead = scriptedLead(config);
    lead.send('lead.message_sent');
    expect(lead.send('meeting.booked').map((e) => e.type)).toEqual(['meeting.booked', 'goal.hit']);
    expect(lead.snapshot.state).toBe('goal_hit');
  });

  it('the shipped hand-off-cold agent declares that stop (cold, no Sparky), and condition states must exist', () => {
    expect(loadAgentConfig('hand-off-cold', 'lead-lifecycle').stopConversationOn).toEqual([
      { state: 'cold', sparky: false },
    ]);
    const typo = AgentConfigSchema.parse({ stopConversationOn: [{ anyOf: [{ state: 'colt' }] }] });
    expect(() => checkAgentConfig(typo, def, 'agent x')).toThrow(DefinitionError);
    expect(() => checkAgentConfig(typo, def, 'agent x')).toThrow(
      'agent x: stopConversationOn.0.anyOf.0.state: "colt" is not a state of lead-lifecycle',
    );
  });
});

describe('versioned CRM sets', () => {
  it('refuses a crm.state_set based on an older version, logged with the reason; the lead stays', () => {
    const lead = scriptedLead(AgentConfigSchema.parse({}));
    lead.send('lead.message_sent'); // v1 engaged
    lead.send('meeting.booked'); // v2 meeting_booked: the CRM sync sends version 2
    lead.send('meeting.missed'); // v3 no_show
    const late = lead.send('crm.state_set', { state: 'meeting_booked', version: 2 });
    expect(late).toHaveLength(1);
    expect(late[0]).toMatchObject({
      stateBefore: 'no_show',
      stateAfter: 'no_show',
      actions: [{ type: 'refuse', reason: "crm.state_set: based on version 2, older than the lead's version 3" }],
    });
    expect(lead.snapshot).toMatchObject({ state: 'no_show', version: 3, eventCount: 4 });
  });

  it('applies a set based on the current version, and an unversioned set as before', () => {
    const lead = scriptedLead(AgentConfigSchema.parse({}));
    lead.send('lead.message_sent'); // v1
    lead.send('crm.state_set', { state: 'meeting_booked', version: 1 });
    expect(lead.snapshot).toMatchObject({ state: 'meeting_booked', version: 2 });
    lead.send('crm.state_set', { state: 'deal_closed' });
    expect(lead.snapshot).toMatchObject({ state: 'deal_closed', version: 3 });
  });

  it('refuses a version that is not a whole number, and does not evaluate conditions for refused sets', () => {
    const config = AgentConfigSchema.parse({ goal: { event: 'crm.state_set' } });
    const lead = scriptedLead(config);
    lead.send('lead.message_sent');
    for (const version of ['1', 1.5, -1, null]) {
      const [e, ...raised] = lead.send('crm.state_set', { state: 'cold', version });
      expect(e!.actions[0]).toMatchObject({ type: 'refuse' });
      expect(raised).toEqual([]);
    }
    expect(lead.snapshot.state).toBe('engaged');
  });
});

describe("CRM sets ordered by the CRM's own time", () => {
  it('refuses a set older than the newest applied one, applies equal or newer ones, and keeps the time across conversations', () => {
    const lead = scriptedLead(AgentConfigSchema.parse({}));
    lead.send('crm.state_set', { state: 'meeting_booked', crmUpdatedAt: '2025-01-06T10:00:00Z' });
    expect(lead.snapshot).toMatchObject({ state: 'meeting_booked', placedAt: '2025-01-06T10:00:00Z' });
    const late = lead.send('crm.state_set', { state: 'engaged', crmUpdatedAt: '2025-01-06T09:59:59Z' });
    expect(late[0]!.actions).toEqual([
      {
        type: 'refuse',
        reason:
          'crm.state_set: detail.crmUpdatedAt 2025-01-06T09:59:59Z is older than the newest one applied (2025-01-06T10:00:00Z)',
      },
    ]);
    expect(lead.snapshot.state).toBe('meeting_booked');
    lead.send('crm.state_set', { state: 'goal_hit', crmUpdatedAt: '2025-01-06T10:00:00Z' });
    lead.send('crm.state_set', { state: 'engaged', crmUpdatedAt: '2025-01-07T10:00:00+01:00' });
    expect(lead.snapshot).toMatchObject({ state: 'engaged', conversation: 2, placedAt: '2025-01-07T10:00:00+01:00' });
    expect(lead.send('crm.state_set', { state: 'cold', crmUpdatedAt: 'yesterday' })[0]!.actions[0]).toMatchObject({
      type: 'refuse',
    });
    // An invalid target is refused and does not move the CRM's clock.
    lead.send('crm.state_set', { state: 'hot', crmUpdatedAt: '2025-02-01T00:00:00Z' });
    expect(lead.snapshot.placedAt).toBe('2025-01-07T10:00:00+01:00');
  });
});

describe('stale time-based events', () => {
  it('a timer event whose expectedVersion is not the lead version is logged and ignored', () => {
    const lead = scriptedLead(AgentConfigSchema.parse({}));
    lead.send('agent.message_sent'); // v1 outreach
    lead.send('lead.message_sent'); // v2 engaged
    const stale = lead.send('follow_ups.exhausted', { expectedVersion: 1 });
    expect(stale[0]).toMatchObject({
      stateAfter: 'engaged',
      actions: [{ type: 'refuse', reason: 'stale: expected version 1, the lead is at version 2' }],
    });
    lead.send('follow_ups.exhausted', { expectedVersion: 2 });
    expect(lead.snapshot.state).toBe('cold');
  });
});
