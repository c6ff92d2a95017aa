/** The timer planner (pure): which schedules a state change sets or cancels, and what a due follow-up does. */
import { describe, expect, it } from 'vitest';
import { AgentConfigSchema } from '../../../src/definitions/lifecycle/agent-config.ts';
import type { EntitySnapshot, LifecycleEvent } from '../../../src/definitions/lifecycle/schema.ts';
import { TimersSchema } from '../../../src/definitions/lifecycle/timers-config.ts';
import { type StateChangedDetail, stateChangeOf } from '../../../src/runtime/lifecycle/state-changes.ts';
import {
  decideFollowUp,
  type FollowUpDue,
  restampTimer,
  supersedes,
  timerName,
  timersForChange,
} from '../../../src/runtime/lifecycle/timers.ts';
import { applyEvent, initialSnapshot } from '../../../src/runtime/lifecycle/transition.ts';
import { def } from './support.ts';

const timers = TimersSchema.parse({ followUpHours: [48, 72], coldAfterDays: 7, renewalAfterDays: 365 });
const config = AgentConfigSchema.parse({ timers });

/** Apply `[type, time]` pairs from a new member; the snapshot and the change of the last one. */
function member(steps: [string, string][]): { snapshot: EntitySnapshot; change: StateChangedDetail | undefined } {
  let snapshot = initialSnapshot(def);
  let change: StateChangedDetail | undefined;
  steps.forEach(([type, time], i) => {
    const event: LifecycleEvent = { id: `e${i}`, entityId: 'member-1', type, time };
    const r = applyEvent(def, snapshot, event, config);
    change = stateChangeOf(def, snapshot, r);
    snapshot = r.snapshot;
  });
  return { snapshot, change };
}

const OUTREACH: [string, string] = ['agent.message_sent', '2025-01-06T09:00:00Z'];

describe('timersForChange', () => {
  it('starts the follow-up chain when the member can receive follow-ups: step 1 after the first cadence', () => {
    const plan = timersForChange(def, timers, member([OUTREACH]).change!);
    expect(plan.cancel).toEqual([]);
    expect(plan.set).toEqual([
      {
        name: timerName('follow-up', 'member-1'),
        kind: 'follow-up',
        entityId: 'member-1',
        dueAt: '2025-01-08T09:00:00Z',
        stamp: { version: 1, setAt: '2025-01-06T09:00:00Z', step: 1 },
        delivery: {
          source: 'stepwise.lifecycle',
          detailType: 'follow_up.due',
          detail: {
            entityId: 'member-1',
            dueAt: '2025-01-08T09:00:00Z',
            timer: { version: 1, setAt: '2025-01-06T09:00:00Z', step: 1 },
          },
        },
      },
    ]);
  });

  it('cancels the chain when the member cannot receive follow-ups, and sets renewal.due a year after closed with the version guard', () => {
    const booked = timersForChange(def, timers, member([OUTREACH, ['call.booked', '2025-01-07T10:00:00Z']]).change!);
    expect(booked).toEqual({ set: [], cancel: [timerName('follow-up', 'member-1')], unscheduled: [], restamp: [] });
    const closed = timersForChange(def, timers, member([OUTREACH, ['deal.closed', '2025-03-01T12:00:00Z']]).change!);
    expect(closed.cancel).toEqual([timerName('follow-up', 'member-1')]);
    expect(closed.set).toMatchObject([
      {
        kind: 'renewal',
        dueAt: '2026-03-01T12:00:00Z',
        delivery: {
          source: 'stepwise.scheduler',
          detailType: 'renewal.due',
          detail: { memberId: 'member-1', eventId: `${timerName('renewal', 'member-1')}:v2`, expectedVersion: 2 },
        },
      },
    ]);
    const renewing = timersForChange(
      def,
      timers,
      member([OUTREACH, ['deal.closed', '2025-03-01T12:00:00Z'], ['renewal.due', '2026-03-01T12:00:00Z']]).change!,
    );
    expect(renewing.cancel).toContain(timerName('renewal', 'member-1'));
  });

  it('re-arms the pending renewal for the new version when a context-only change keeps the member in closed', () => {
    const cfg = AgentConfigSchema.parse({ timers, stopFollowUpsOn: [{ event: 'link.clicked' }] });
    let snapshot = initialSnapshot(def);
    let change: StateChangedDetail | undefined;
    for (const [i, [type, time]] of (
      [OUTREACH, ['deal.closed', '2025-03-01T12:00:00Z'], ['link.clicked', '2025-03-02T12:00:00Z']] as [
        string,
        string,
      ][]
    ).entries()) {
      const r = applyEvent(def, snapshot, { id: `e${i}`, entityId: 'member-1', type, time }, cfg);
      change = stateChangeOf(def, snapshot, r);
      snapshot = r.snapshot;
    }
    expect(change).toMatchObject({
      from: 'closed',
      to: 'closed',
      version: 3,
      context: { followUpsStopped: true },
    });
    expect(timersForChange(def, timers, change!)).toEqual({
      set: [],
      cancel: [timerName('follow-up', 'member-1')],
      unscheduled: [],
      restamp: [{ name: timerName('renewal', 'member-1'), version: 3 }],
    });
    const renewal = timersForChange(def, timers, member([OUTREACH, ['deal.closed', '2025-03-01T12:00:00Z']]).change!)
      .set[0]!;
    const rearmed = restampTimer(renewal, 3);
    expect(rearmed).toMatchObject({
      name: renewal.name,
      dueAt: renewal.dueAt,
      stamp: { version: 3 },
      delivery: { detail: { expectedVersion: 3, eventId: renewal.delivery.detail.eventId } },
    });
    expect(supersedes(rearmed.stamp, renewal.stamp)).toBe(true);
  });

  it('sets nothing for an agent without timers; a chain of no follow-ups is only the cold check', () => {
    expect(timersForChange(def, undefined, member([OUTREACH]).change!).set).toEqual([]);
    const coldOnly = timersForChange(def, TimersSchema.parse({ coldAfterDays: 3 }), member([OUTREACH]).change!);
    expect(coldOnly.set).toMatchObject([{ dueAt: '2025-01-09T09:00:00Z', stamp: { step: 1 } }]);
  });

  it('orders timers under one name by version, then chain start, then step', () => {
    const s = (version: number, setAt: string, step: number) => ({ version, setAt, step });
    expect(supersedes(s(2, '2025-01-01T00:00:00Z', 1), s(1, '2025-02-01T00:00:00Z', 5))).toBe(true);
    expect(supersedes(s(1, '2025-02-01T00:00:00Z', 1), s(2, '2025-01-01T00:00:00Z', 1))).toBe(false);
    expect(supersedes(s(2, '2025-01-02T00:00:00Z', 1), s(2, '2025-01-01T00:00:00Z', 2))).toBe(true);
    expect(supersedes(s(2, '2025-01-01T00:00:00Z', 2), s(2, '2025-01-01T00:00:00Z', 1))).toBe(true);
    expect(supersedes(s(2, '2025-01-01T00:00:00Z', 1), s(2, '2025-01-01T00:00:00Z', 2))).toBe(false);
  });
});

describe('decideFollowUp', () => {
  const due = (version: number, step: number, dueAt: string, setAt = '2025-01-06T09:00:00Z'): FollowUpDue => ({
    entityId: 'member-1',
    dueAt,
    timer: { version, setAt, step },
  });
  const outreach = member([OUTREACH]).snapshot;

  it('sends follow-up n, logs it as agent.message_sent at the due time with a stable id, and sets step n+1 after the next cadence', () => {
    const d = decideFollowUp(def, timers, due(1, 1, '2025-01-08T09:00:00Z'), outreach, undefined);
    expect(d).toMatchObject({
      outcome: 'send',
      followUp: 1,
      event: { type: 'agent.message_sent', time: '2025-01-08T09:00:00Z', detail: { followUp: 1 } },
    });
    if (d.outcome !== 'send') throw new Error('unreachable');
    expect(d.event.id).toBe(`${timerName('follow-up', 'member-1')}:v1:2025-01-06T09:00:00Z:1`);
    expect(d.next).toMatchObject({
      dueAt: '2025-01-11T09:00:00Z',
      stamp: { version: 1, setAt: '2025-01-06T09:00:00Z', step: 2 },
    });
    const last = decideFollowUp(def, timers, due(1, 2, '2025-01-11T09:00:00Z'), outreach, undefined);
    expect(last).toMatchObject({
      outcome: 'send',
      followUp: 2,
      next: { dueAt: '2025-01-18T09:00:00Z', stamp: { step: 3 } },
    });
  });

  it('after the last follow-up and coldAfterDays of silence raises follow_ups.exhausted guarded by the version', () => {
    expect(decideFollowUp(def, timers, due(1, 3, '2025-01-18T09:00:00Z'), outreach, undefined)).toMatchObject({
      outcome: 'exhausted',
      event: { type: 'follow_ups.exhausted', time: '2025-01-18T09:00:00Z', detail: { expectedVersion: 1 } },
    });
    // No cold timer: the chain ends after the last follow-up.
    const noCold = TimersSchema.parse({ followUpHours: [48] });
    expect(decideFollowUp(def, noCold, due(1, 1, '2025-01-08T09:00:00Z'), outreach, undefined)).toMatchObject({
      outcome: 'send',
      next: undefined,
    });
  });

  it('drops a timer of another version (stale) or for an unknown member, and skips a member that cannot receive follow-ups', () => {
    expect(decideFollowUp(def, timers, due(0, 1, '2025-01-08T09:00:00Z'), outreach, undefined)).toEqual({
      outcome: 'stale',
      reason: 'set at version 0, the member is at version 1',
    });
    expect(decideFollowUp(def, timers, due(1, 1, '2025-01-08T09:00:00Z'), undefined, undefined).outcome).toBe('stale');
    const stopped: EntitySnapshot = { ...outreach, context: { followUpsStopped: true } };
    expect(decideFollowUp(def, timers, due(1, 1, '2025-01-08T09:00:00Z'), stopped, undefined)).toEqual({
      outcome: 'not-eligible',
      reason: 'member is outreach with follow-ups stopped',
    });
  });

  it('restarts the chain from a reply that came after the chain started (a reply in engaged does not change the version)', () => {
    const engaged = member([OUTREACH, ['member.message_sent', '2025-01-06T12:00:00Z']]).snapshot;
    const d = decideFollowUp(
      def,
      timers,
      due(2, 1, '2025-01-08T12:00:00Z', '2025-01-06T12:00:00Z'),
      engaged,
      '2025-01-07T18:00:00Z',
    );
    expect(d).toMatchObject({
      outcome: 'restarted',
      next: { dueAt: '2025-01-09T18:00:00Z', stamp: { version: 2, setAt: '2025-01-07T18:00:00Z', step: 1 } },
    });
    // The reply that started the chain is not "after" it.
    expect(
      decideFollowUp(
        def,
        timers,
        due(2, 1, '2025-01-08T12:00:00Z', '2025-01-06T12:00:00Z'),
        engaged,
        '2025-01-06T12:00:00Z',
      ).outcome,
    ).toBe('send');
  });
});
