import { describe, expect, it } from 'vitest';
import { loadAgentConfig } from '../../lambdas/lifecycle/loader.ts';
import { buildReport, meetingsBookedPerLead, noShowRate, reengagedAfterCold, timeToMeeting } from '../../lambdas/lifecycle/reporting.ts';
import { LoggedEventSchema, type LoggedEvent } from '../../lambdas/lifecycle/schema.ts';
import { scriptedLead } from './support.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** Four leads through real transitions: a no-show rebooked, a Sparky revival, a lead-initiated booking, one that never books. */
function logs(): LoggedEvent[] {
  const rebooked = scriptedLead(loadAgentConfig('attend-meeting'), 'a-rebooked');
  rebooked.send('agent.message_sent', undefined, '2025-01-01T09:00:00Z');
  rebooked.send('lead.message_sent', undefined, '2025-01-01T10:00:00Z');
  rebooked.send('meeting.booked', undefined, '2025-01-02T09:00:00Z'); // 24 h after first contact
  rebooked.send('meeting.missed', undefined, '2025-01-05T09:00:00Z');
  rebooked.send('lead.message_sent', undefined, '2025-01-06T09:00:00Z');
  rebooked.send('meeting.booked', undefined, '2025-01-07T09:00:00Z');
  rebooked.send('meeting.attended', undefined, '2025-01-09T09:00:00Z');

  const sparky = scriptedLead(loadAgentConfig('book-meeting'), 'b-sparky');
  sparky.send('agent.message_sent', undefined, '2025-01-01T09:00:00Z');
  sparky.send('follow_ups.exhausted', undefined, '2025-01-08T09:00:00Z');
  sparky.send('lead.message_sent', undefined, '2025-04-01T09:00:00Z');
  sparky.send('meeting.booked', undefined, '2025-04-11T09:00:00Z'); // 100 days after first contact

  const inbound = scriptedLead(loadAgentConfig('book-meeting'), 'c-inbound');
  inbound.send('lead.message_sent', undefined, '2025-02-01T09:00:00Z');
  inbound.send('meeting.booked', undefined, '2025-02-01T12:00:00Z'); // booked before any agent message: no time-to-meeting

  const silent = scriptedLead(loadAgentConfig('book-meeting'), 'd-silent');
  silent.send('agent.message_sent', undefined, '2025-03-01T09:00:00Z');
  silent.send('follow_ups.exhausted', undefined, '2025-03-08T09:00:00Z');
  silent.send('agent.message_sent', undefined, '2025-03-09T09:00:00Z'); // nudged while cold, never replied

  return [...rebooked.log, ...sparky.log, ...inbound.log, ...silent.log];
}

describe('reporting', () => {
  it('logs real transitions in the LoggedEvent shape', () => {
    for (const e of logs()) expect(LoggedEventSchema.parse(e)).toEqual(e);
  });

  it('counts meetings booked per lead, over every conversation, zero included', () => {
    expect(meetingsBookedPerLead(logs())).toEqual({ 'a-rebooked': 2, 'b-sparky': 1, 'c-inbound': 1, 'd-silent': 0 });
  });

  it('no-show rate is meeting.missed / meeting.booked; null without bookings', () => {
    expect(noShowRate(logs())).toBe(1 / 4);
    expect(noShowRate(logs().filter((e) => e.leadId === 'd-silent'))).toBeNull();
    expect(noShowRate([])).toBeNull();
  });

  it('time from the first agent.message_sent to the first meeting.booked after it, per lead, median and mean', () => {
    const t = timeToMeeting(logs());
    expect(t.perLead).toEqual({ 'a-rebooked': DAY, 'b-sparky': 100 * DAY });
    expect(t.medianMs).toBe(50.5 * DAY);
    expect(t.meanMs).toBe(50.5 * DAY);
  });

  it('median of an odd number of leads is the middle one', () => {
    const extra = scriptedLead(loadAgentConfig('book-meeting'), 'e-fast');
    extra.send('agent.message_sent', undefined, '2025-05-01T09:00:00Z');
    extra.send('meeting.booked', undefined, '2025-05-01T11:00:00Z');
    const t = timeToMeeting([...logs(), ...extra.log]);
    expect(t.perLead['e-fast']).toBe(2 * HOUR);
    expect(t.medianMs).toBe(DAY);
    expect(t.meanMs).toBe((2 * HOUR + DAY + 100 * DAY) / 3);
    expect(timeToMeeting([])).toEqual({ perLead: {}, medianMs: null, meanMs: null });
  });

  it('leads that re-engaged after going cold: a lead.message_sent while cold', () => {
    expect(reengagedAfterCold(logs())).toEqual(['b-sparky']);
  });

  it('reads each lead in seq order whatever order the events come in', () => {
    const ordered = buildReport(logs());
    const shuffled = buildReport([...logs()].reverse());
    expect(shuffled).toEqual(ordered);
    expect(Object.keys(shuffled.meetingsBooked.perLead)).toEqual(['a-rebooked', 'b-sparky', 'c-inbound', 'd-silent']);
  });

  it('buildReport puts the seed table together', () => {
    const events = logs();
    expect(buildReport(events)).toEqual({
      leads: 4,
      events: events.length,
      meetingsBooked: { total: 4, perLead: { 'a-rebooked': 2, 'b-sparky': 1, 'c-inbound': 1, 'd-silent': 0 } },
      noShow: { booked: 4, missed: 1, rate: 0.25 },
      timeToMeeting: { perLead: { 'a-rebooked': DAY, 'b-sparky': 100 * DAY }, medianMs: 50.5 * DAY, meanMs: 50.5 * DAY },
      reengagedAfterCold: ['b-sparky'],
    });
    // System-raised events are in the same log: each goal met once.
    expect(events.filter((e) => e.type === 'goal.hit').map((e) => e.leadId)).toEqual(['a-rebooked', 'b-sparky', 'c-inbound']);
  });
});
