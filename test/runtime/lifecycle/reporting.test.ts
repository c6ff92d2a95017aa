import { describe, expect, it } from 'vitest';
import { type LoggedEvent, LoggedEventSchema } from '../../../src/definitions/lifecycle/schema.ts';
import {
  buildReport,
  countPerEntity,
  formatReport,
  loggedIn,
  rateOf,
  timeBetween,
} from '../../../src/runtime/lifecycle/reporting.ts';
import { agent, def, scriptedMember } from './support.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/**
 * Four members through real transitions: a no-show rebooked, a revival from cold, a member-initiated booking, one that
 * never books.
 */
function logs(): LoggedEvent[] {
  const rebooked = scriptedMember(agent('attend-call'), 'a-rebooked');
  rebooked.send('agent.message_sent', undefined, '2025-01-01T09:00:00Z');
  rebooked.send('member.message_sent', undefined, '2025-01-01T10:00:00Z');
  rebooked.send('call.booked', undefined, '2025-01-02T09:00:00Z'); // 24 h after first contact
  rebooked.send('call.missed', undefined, '2025-01-05T09:00:00Z');
  rebooked.send('member.message_sent', undefined, '2025-01-06T09:00:00Z');
  rebooked.send('call.booked', undefined, '2025-01-07T09:00:00Z');
  rebooked.send('call.attended', undefined, '2025-01-09T09:00:00Z');

  const sparky = scriptedMember(agent('either'), 'b-sparky');
  sparky.send('agent.message_sent', undefined, '2025-01-01T09:00:00Z');
  sparky.send('follow_ups.exhausted', undefined, '2025-01-08T09:00:00Z');
  sparky.send('member.message_sent', undefined, '2025-04-01T09:00:00Z');
  sparky.send('call.booked', undefined, '2025-04-11T09:00:00Z'); // 100 days after first contact

  const inbound = scriptedMember(agent('either'), 'c-inbound');
  inbound.send('member.message_sent', undefined, '2025-02-01T09:00:00Z');
  inbound.send('call.booked', undefined, '2025-02-01T12:00:00Z'); // booked before any agent message: no time-to-call

  const silent = scriptedMember(agent('either'), 'd-silent');
  silent.send('agent.message_sent', undefined, '2025-03-01T09:00:00Z');
  silent.send('follow_ups.exhausted', undefined, '2025-03-08T09:00:00Z');
  silent.send('agent.message_sent', undefined, '2025-03-09T09:00:00Z'); // nudged while cold, never replied

  return [...rebooked.log, ...sparky.log, ...inbound.log, ...silent.log];
}

describe('reporting', () => {
  it('logs real transitions in the LoggedEvent shape', () => {
    for (const e of logs()) expect(LoggedEventSchema.parse(e)).toEqual(e);
  });

  it('counts calls booked per member, over every conversation, zero included', () => {
    expect(countPerEntity(logs(), 'call.booked')).toEqual({
      total: 4,
      perEntity: { 'a-rebooked': 2, 'b-sparky': 1, 'c-inbound': 1, 'd-silent': 0 },
    });
  });

  it('no-show rate is call.missed / call.booked; null without bookings', () => {
    expect(rateOf(logs(), 'call.missed', 'call.booked').rate).toBe(1 / 4);
    expect(
      rateOf(
        logs().filter((e) => e.entityId === 'd-silent'),
        'call.missed',
        'call.booked',
      ).rate,
    ).toBeNull();
    expect(rateOf([], 'call.missed', 'call.booked')).toEqual({ count: 0, of: 0, rate: null });
  });

  it('time from the first agent.message_sent to the first call.booked after it, per member, median and mean', () => {
    const t = timeBetween(logs(), 'agent.message_sent', 'call.booked');
    expect(t.perEntity).toEqual({ 'a-rebooked': DAY, 'b-sparky': 100 * DAY });
    expect(t.medianMs).toBe(50.5 * DAY);
    expect(t.meanMs).toBe(50.5 * DAY);
  });

  it('median of an odd number of members is the middle one', () => {
    const extra = scriptedMember(agent('either'), 'e-fast');
    extra.send('agent.message_sent', undefined, '2025-05-01T09:00:00Z');
    extra.send('call.booked', undefined, '2025-05-01T11:00:00Z');
    const t = timeBetween([...logs(), ...extra.log], 'agent.message_sent', 'call.booked');
    expect(t.perEntity['e-fast']).toBe(2 * HOUR);
    expect(t.medianMs).toBe(DAY);
    expect(t.meanMs).toBe((2 * HOUR + DAY + 100 * DAY) / 3);
    expect(timeBetween([], 'agent.message_sent', 'call.booked')).toEqual({
      perEntity: {},
      medianMs: null,
      meanMs: null,
    });
  });

  it('members that replied while cold: a member.message_sent while cold', () => {
    expect(loggedIn(logs(), 'member.message_sent', 'cold')).toEqual(['b-sparky']);
  });

  it('reads each member in seq order whatever order the events come in', () => {
    const ordered = buildReport(def, logs());
    const shuffled = buildReport(def, [...logs()].reverse());
    expect(shuffled).toEqual(ordered);
    expect(Object.keys((shuffled.reports.callsBooked as { perEntity: object }).perEntity)).toEqual([
      'a-rebooked',
      'b-sparky',
      'c-inbound',
      'd-silent',
    ]);
  });

  it("reports per agent: the agent's goal rate and the reports its config declares, beside the statechart's", () => {
    const events = logs();
    const attend = agent('attend-call');
    const report = buildReport(def, events, { name: 'attend-call', config: attend });
    expect(report.reports).toEqual(buildReport(def, events).reports);
    expect(report.agent).toEqual({
      name: 'attend-call',
      goal: { reached: 3, of: 4, rate: 0.75 },
      reports: {
        attendance: { count: 1, of: 4, rate: 0.25 },
        bookedToAttended: { perEntity: { 'a-rebooked': 7 * DAY }, medianMs: 7 * DAY, meanMs: 7 * DAY },
      },
    });
    expect(formatReport(def, report, attend).split('\n').slice(-3)).toEqual([
      'agent attend-call: goal hit by 3 of 4 members (75%)',
      '  calls attended: 25% (1 call.attended of 4 call.booked)',
      '  time from booking to attending: median 168.0 h, mean 168.0 h over 1 members',
    ]);
    const noGoal = buildReport(def, [], { name: 'no-goal', config: { goal: null, stopFollowUpsOn: [] } });
    expect(noGoal.agent).toEqual({ name: 'no-goal', goal: null, reports: {} });
    expect(formatReport(def, noGoal).split('\n').at(-1)).toBe('agent no-goal: no goal');
  });

  it('buildReport puts the reports table together (entities, events, states, each report), as the statechart declares it', () => {
    const events = logs();
    const report = buildReport(def, events);
    expect(report).toEqual({
      entities: 4,
      events: events.length,
      states: { cold: 1, goal_hit: 3 },
      reports: {
        callsBooked: { total: 4, perEntity: { 'a-rebooked': 2, 'b-sparky': 1, 'c-inbound': 1, 'd-silent': 0 } },
        noShowRate: { count: 1, of: 4, rate: 0.25 },
        timeToCall: {
          perEntity: { 'a-rebooked': DAY, 'b-sparky': 100 * DAY },
          medianMs: 50.5 * DAY,
          meanMs: 50.5 * DAY,
        },
        revivedFromCold: ['b-sparky'],
      },
    });
    expect(formatReport(def, report).split('\n')).toEqual([
      `4 members, ${events.length} events`,
      'members by state: cold: 1, goal_hit: 3',
      'calls booked: 4 (a-rebooked: 2, b-sparky: 1, c-inbound: 1, d-silent: 0)',
      'no-show rate: 25% (1 call.missed of 4 call.booked)',
      'time from first contact to a booked call: median 1212.0 h, mean 1212.0 h over 2 members',
      'replied while cold: b-sparky',
    ]);
    // System-raised events are in the same log: each goal met once.
    expect(events.filter((e) => e.type === 'goal.hit').map((e) => e.entityId)).toEqual([
      'a-rebooked',
      'b-sparky',
      'c-inbound',
    ]);
  });
});
