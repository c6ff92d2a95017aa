/**
 * Properties of the member timers under random events and random time jumps (fast-check), with the
 * pure planner, `applyEvent` and the scheduler emulation wired the way the stack wires them
 * (change → timers listener; due → follow-up sender or the lifecycle):
 * - a follow-up only goes out while the member can receive one, at the version its timer was set at;
 * - each chain sends its follow-ups 1..k in order, k at most the cadence's length, each once;
 * - cancelling and replacing is complete: no delivered timer is ever stale;
 * - liveness: while a member can receive follow-ups (and the agent has a cold timer), a follow-up timer is pending.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type AgentConfig, AgentConfigSchema } from '../../../src/definitions/lifecycle/agent-config.ts';
import type { EntitySnapshot, LifecycleEvent, LoggedEvent } from '../../../src/definitions/lifecycle/schema.ts';
import { LocalScheduler } from '../../../src/local/cloud/scheduler.ts';
import { stateChangeOf } from '../../../src/runtime/lifecycle/state-changes.ts';
import {
  decideFollowUp,
  FollowUpDueSchema,
  restampTimer,
  type TimerRequest,
  timersForChange,
} from '../../../src/runtime/lifecycle/timers.ts';
import { applyEvent, canReceiveFollowUp, initialSnapshot } from '../../../src/runtime/lifecycle/transition.ts';
import { def } from './support.ts';

const T0 = Date.parse('2025-01-06T09:00:00Z');
const HOUR = 3_600_000;

interface Sent {
  key: string;
  version: number;
  setAt: string;
  followUp: number;
  member: EntitySnapshot;
}

/** One member under the wired planner; returns what happened. */
async function simulate(
  config: AgentConfig,
  steps: ({ type: string; detail?: Record<string, unknown> } | { hours: number })[],
) {
  const timers = config.timers!;
  let member = initialSnapshot(def);
  const log: LoggedEvent[] = [];
  const ids = new Set<string>();
  const sent: Sent[] = [];
  const stale: string[] = [];
  const livenessGaps: string[] = [];
  const apply = async (event: LifecycleEvent) => {
    if (ids.has(event.id)) return;
    const r = applyEvent(def, member, event, config);
    r.events.forEach((e) => ids.add(e.id));
    log.push(...r.events);
    const change = stateChangeOf(def, member, r);
    member = r.snapshot;
    if (change) {
      const plan = timersForChange(def, timers, change);
      for (const name of plan.cancel) await scheduler.cancel(name);
      for (const request of plan.set) await scheduler.set(request);
      for (const { name, version } of plan.restamp) {
        const pending = await scheduler.get(name);
        if (pending && pending.stamp.version < version) await scheduler.set(restampTimer(pending, version));
      }
    }
  };
  const scheduler: LocalScheduler = new LocalScheduler({
    start: T0,
    deliver: async (t: TimerRequest) => {
      const detail = { ...t.delivery.detail, timer: t.stamp };
      if (t.delivery.detailType === 'follow_up.due') {
        const due = FollowUpDueSchema.parse(detail);
        const decision = decideFollowUp(
          def,
          timers,
          due,
          member,
          log.filter((e) => e.type === 'member.message_sent').at(-1)?.time,
        );
        if (decision.outcome === 'stale') stale.push(`${t.name} ${decision.reason}`);
        if (decision.outcome === 'send') {
          if (!sent.some((s) => s.key === decision.event.id))
            sent.push({
              key: decision.event.id,
              version: due.timer.version,
              setAt: due.timer.setAt,
              followUp: decision.followUp,
              member: structuredClone(member),
            });
          await apply(decision.event);
        }
        if (decision.outcome === 'exhausted') await apply(decision.event);
        if ((decision.outcome === 'send' || decision.outcome === 'restarted') && decision.next)
          await scheduler.set(decision.next);
      } else {
        const { eventId, memberId: _m, ...rest } = detail as unknown as { eventId: string; memberId: string };
        await apply({ id: eventId, entityId: 'member', type: t.delivery.detailType, time: t.dueAt, detail: rest });
      }
    },
  });
  const checkLiveness = (when: string) => {
    if (
      canReceiveFollowUp(def, member) &&
      timers.coldAfterDays !== null &&
      !scheduler.pending.some((p) => p.kind === 'follow-up')
    )
      livenessGaps.push(`${when}: ${member.state} v${member.version} has no follow-up timer`);
  };
  let n = 0;
  for (const step of steps) {
    if ('hours' in step) {
      await scheduler.advanceTo(scheduler.now() + step.hours * HOUR, async () =>
        checkLiveness(new Date(scheduler.now()).toISOString()),
      );
    } else {
      await scheduler.advanceTo(scheduler.now() + 1000);
      await apply({
        id: `e${n++}`,
        entityId: 'member',
        type: step.type,
        time: new Date(scheduler.now()).toISOString().replace(/\.\d{3}Z$/, 'Z'),
        ...(step.detail && { detail: step.detail }),
      });
    }
    checkLiveness(`after ${JSON.stringify(step)}`);
  }
  return { member, log, sent, stale, livenessGaps, scheduler };
}

const configArb = fc
  .record({
    followUpHours: fc.array(fc.integer({ min: 1, max: 96 }), { maxLength: 3 }),
    coldAfterDays: fc.option(fc.integer({ min: 1, max: 10 }), { nil: null }),
    renewalAfterDays: fc.option(fc.integer({ min: 1, max: 400 }), { nil: null }),
    stop: fc.boolean(),
  })
  .map(({ stop, ...timers }) =>
    AgentConfigSchema.parse({
      goal: null,
      sparky: true,
      timers,
      stopFollowUpsOn: stop ? [{ event: 'link.clicked' }] : [],
    }),
  );
const stepArb = fc.oneof(
  {
    weight: 5,
    arbitrary: fc
      .constantFrom(
        'agent.message_sent',
        'member.message_sent',
        'link.clicked',
        'call.booked',
        'call.missed',
        'deal.closed',
        'conversation.stopped',
        'follow_ups.exhausted',
      )
      .map((type) => ({ type })),
  },
  {
    weight: 1,
    arbitrary: fc
      .constantFrom('engaged', 'outreach', 'closed', 'cold')
      .map((state) => ({ type: 'crm.state_set', detail: { state } })),
  },
  { weight: 4, arbitrary: fc.integer({ min: 1, max: 24 * 30 }).map((hours) => ({ hours })) },
);

describe('member timer properties', () => {
  it('follow-ups only while eligible, in order, once each; no delivered timer is stale; an eligible member always has a follow-up timer', async () => {
    let followUps = 0;
    let colds = 0;
    await fc.assert(
      fc.asyncProperty(configArb, fc.array(stepArb, { minLength: 5, maxLength: 40 }), async (config, steps) => {
        const { log, sent, stale, livenessGaps, scheduler } = await simulate(config, steps);
        for (const s of sent) {
          expect(canReceiveFollowUp(def, s.member), `follow-up ${s.key} sent to a member in ${s.member.state}`).toBe(
            true,
          );
          expect(s.member.version).toBe(s.version);
          expect(s.followUp).toBeLessThanOrEqual(config.timers!.followUpHours.length);
        }
        const chains = new Map<string, number[]>();
        for (const s of sent)
          chains.set(`${s.version}@${s.setAt}`, [...(chains.get(`${s.version}@${s.setAt}`) ?? []), s.followUp]);
        for (const numbers of chains.values()) expect(numbers).toEqual(numbers.map((_, i) => i + 1));
        expect(stale).toEqual([]);
        // Timer-raised lifecycle events are never refused: the planner cancelled or replaced every timer of a member that moved on.
        expect(
          log.filter((e) => e.detail?.expectedVersion !== undefined && e.actions.some((a) => a.type === 'refuse')),
        ).toEqual([]);
        expect(livenessGaps).toEqual([]);
        expect(scheduler.pending.every((p) => Date.parse(p.dueAt) > scheduler.now())).toBe(true);
        followUps += sent.length;
        colds += log.filter((e) => e.type === 'follow_ups.exhausted' && e.detail?.expectedVersion !== undefined).length;
      }),
      { numRuns: 300 },
    );
    // The runs exercised the timers, not only the events.
    expect(followUps).toBeGreaterThan(100);
    expect(colds).toBeGreaterThan(10);
  });
});
