import { describe, expect, it } from 'vitest';
import { loadAgentConfig } from '../../../src/definitions/lifecycle/loader.ts';
import { type LoggedEvent, LoggedEventSchema } from '../../../src/definitions/lifecycle/schema.ts';
import {
  buildReport,
  countPerEntity,
  formatReport,
  loggedIn,
  rateOf,
  timeBetween,
} from '../../../src/runtime/lifecycle/reporting.ts';
import { def, scriptedLead } from './support.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/**
 * Four leads through real transitions: a no-show rebooked, a Sparky revival, a lead-initiated booking, one that never
 * books.
 */
function logs(): LoggedEvent[] {
  const rebooked = scriptedLead(loadAgentConfig('attend-meeting', 'lead-lifecycle'), 'a-rebooked');
  rebooked.send('agent.message_sent', undefined, '2025-01-01T09:00:00Z');
  rebooked.send('lead.message_sent', undefined, '2025-01-01T10:00:00Z');
  rebooked.send('meeting.booked', undefined, '2025-01-02T09:00:00Z'); // 24 h after first contact
  rebooked.send('meeting.missed', undefined, '2025-01-05T09:00:00Z');
  rebooked.send('lead.message_sent', undefined, '2025-01-06T09:00:00Z');
  rebooked.send('meeting.booked', undefined, '2025-01-07T09:00:00Z');
  rebooked.send('meeting.attended', undefined, '2025-01-09T09:00:00Z');

  const sparky = scriptedLead(loadAgentConfig('book-meeting', 'lead-lifecycle'), 'b-sparky');
  sparky.send('agent.message_sent', undefined, '2025-01-01T09:00:00Z');
  sparky.send('follow_ups.exhausted', undefined, '2025-01-08T09:00:00Z');
  sparky.send('lead.message_sent', undefined, '2025-04-01T09:00:00Z');
  sparky.send('meeting.booked', undefined, '2025-04-11T09:00:00Z'); // 100 days after first contact

  const inbound = scriptedLead(loadAgentConfig('book-meeting', 'lead-lifecycle'), 'c-inbound');
  inbound.send('lead.message_sent', undefined, '2025-02-01T09:00:00Z');
  inbound.send('meeting.booked', undefined, '2025-02-01T12:00:00Z'); // booked before any agent message: no time-to-meeting

  const silent = scriptedLead(loadAgentConfig('book-meeting', 'lead-lifecycle'), 'd-silent');
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
    expect(countPerEntity(logs(), 'meeting.booked')).toEqual({
      total: 4,
      perEntity: { 'a-rebooked': 2, 'b-sparky': 1, 'c-inbound': 1, 'd-silent': 0 },
    });
  });

  it('no-show rate is meeting.missed / meeting.booked; null without bookings', () => {
    expect(rateOf(logs(), 'meeting.missed', 'meeting.booked').rate).toBe(1 / 4);
    expect(
      rateOf(
        logs().filter((e) => e.entityId === 'd-silent'),
        'meeting.missed',
        'meeting.booked',
      ).rate,
    ).toBeNull();
    expect(rateOf([], 'meeting.missed', 'meeting.booked')).toEqual({ count: 0, of: 0, rate: null });
  });

  it('time from the first agent.message_sent to the first meeting.booked after it, per lead, median and mean', () => {
    const t = timeBetween(logs(), 'agent.message_sent', 'meeting.booked');
    expect(t.perEntity).toEqual({ 'a-rebooked': DAY, 'b-sparky': 100 * DAY });
    expect(t.medianMs).toBe(50.5 * DAY);
    expect(t.meanMs).toBe(50.5 * DAY);
  });

  it('median of an odd number of leads is the middle one', () => {
    const extra = scriptedLead(loadAgentConfig('book-meeting', 'lead-lifecycle'), 'e-fast');
    extra.send('agent.message_sent', undefined, '2025-05-01T09:00:00Z');
    extra.send('meeting.booked', undefined, '2025-05-01T11:00:00Z');
    const t = timeBetween([...logs(), ...extra.log], 'agent.message_sent', 'meeting.booked');
    expect(t.perEntity['e-fast']).toBe(2 * HOUR);
    expect(t.medianMs).toBe(DAY);
    expect(t.meanMs).toBe((2 * HOUR + DAY + 100 * DAY) / 3);
    expect(timeBetween([], 'agent.message_sent', 'meeting.booked')).toEqual({
      perEntity: {},
      medianMs: null,
      meanMs: null,
    });
  });

  it('leads that re-engaged after going cold: a lead.message_sent while cold', () => {
    expect(loggedIn(logs(), 'lead.message_sent', 'cold')).toEqual(['b-sparky']);
  });

  it('reads each lead in seq order whatever order the events come in', () => {
    const ordered = buildReport(def, logs());
    const shuffled = buildReport(def, [...logs()].reverse());
    expect(shuffled).toEqual(ordered);
    expect(Object.keys((shuffled.reports.meetingsBooked as { perEntity: object }).perEntity)).toEqual([
      'a-rebooked',
      'b-sparky',
      'c-inbound',
      'd-silent',
    ]);
  });

  it("reports per agent: the agent's goal rate and the reports its config declares, beside the statechart's", () => {
    const events = logs();
    const attend = loadAgentConfig('attend-meeting', 'lead-lifecycle');
    const report = buildReport(def, events, { name: 'attend-meeting', config: attend });
    expect(report.reports).toEqual(buildReport(def, events).reports);
    expect(report.agent).toEqual({
      name: 'attend-meeting',
      goal: { reached: 3, of: 4, rate: 0.75 },
      reports: {
        attendance: { count: 1, of: 4, rate: 0.25 },
        bookedToAttended: { perEntity: { 'a-rebooked': 7 * DAY }, medianMs: 7 * DAY, meanMs: 7 * DAY },
      },
    });
    expect(formatReport(def, report, attend).split('\n').slice(-3)).toEqual([
      'agent attend-meeting: goal hit by 3 of 4 leads (75%)',
      '  meetings attended: 25% (1 meeting.attended of 4 meeting.booked)',
      '  time from booking to attending: median 168.0 h, mean 168.0 h over 1 leads',
    ]);
    const noGoal = buildReport(def, [], { name: 'nurture', config: { goal: null, stopFollowUpsOn: [] } });
    expect(noGoal.agent).toEqual({ name: 'nurture', goal: null, reports: {} });
    expect(formatReport(def, noGoal).split('\n').at(-1)).toBe('agent nurture: no goal');
  });

  it('buildReport puts the reports table together (entities, events, states, each report), as the statechart declares it', () => {
    const events = logs();
    const report = buildReport(def, events);
    expect(report).toEqual({
      entities: 4,
      events: events.length,
      states: { cold: 1, goal_hit: 3 },
      reports: {
        meetingsBooked: { total: 4, perEntity: { 'a-rebooked': 2, 'b-sparky': 1, 'c-inbound': 1, 'd-silent': 0 } },
        noShow: { count: 1, of: 4, rate: 0.25 },
        timeToMeeting: {
          perEntity: { 'a-rebooked': DAY, 'b-sparky': 100 * DAY },
          medianMs: 50.5 * DAY,
          meanMs: 50.5 * DAY,
        },
        reengagedAfterCold: ['b-sparky'],
      },
    });
    expect(formatReport(def, report).split('\n')).toEqual([
      `4 leads, ${events.length} events`,
      'leads by state: cold: 1, goal_hit: 3',
      'meetings booked: 4 (a-rebooked: 2, b-sparky: 1, c-inbound: 1, d-silent: 0)',
      'no-show rate: 25% (1 meeting.missed of 4 meeting.booked)',
      'time from first contact to meeting: median 1212.0 h, mean 1212.0 h over 2 leads',
      're-engaged after going cold: b-sparky',
    ]);
    // System-raised events are in the same log: each goal met once.
    expect(events.filter((e) => e.type === 'goal.hit').map((e) => e.entityId)).toEqual([
      'a-rebooked',
      'b-sparky',
      'c-inbound',
    ]);
  });
});
