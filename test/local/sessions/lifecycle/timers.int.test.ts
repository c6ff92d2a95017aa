/**
 * Lifecycle timers end to end on the local stack (bus, Express state machine, DynamoDB Local, outbox
 * pipe, listeners) with the EventBridge Scheduler emulation on an injected clock: follow-ups are
 * sent and logged, the member goes cold after the last one, renewals come due a year after the
 * close, and stale timers are dropped. Months play in milliseconds and every run is the same.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AgentConfig, AgentConfigSchema } from '../../../../src/definitions/lifecycle/agent-config.ts';
import type { LoggedEvent } from '../../../../src/definitions/lifecycle/schema.ts';
import { sessionDynamoDb } from '../../../../src/local/cloud/dynamodb-connection.ts';
import type { DynamoDbLocal } from '../../../../src/local/cloud/dynamodb-local.ts';
import { LifecycleSession, parseReplayFile } from '../../../../src/local/sessions/lifecycle-session.ts';
import { entityHistory } from '../../../../src/runtime/lifecycle/queries.ts';
import { timerName } from '../../../../src/runtime/lifecycle/timers.ts';
import { agent, def, LIFECYCLE } from '../../../runtime/lifecycle/support.ts';

let ddb: DynamoDbLocal;
beforeAll(async () => {
  ddb = await sessionDynamoDb();
});
afterAll(async () => {
  await ddb?.stop();
});

/**
 * Works the member indefinitely, revives cold members (Sparky): follow-ups after 2 and 3 days, cold a week after the last,
 * renewal a year after the close.
 */
const worksOn = AgentConfigSchema.parse({
  goal: null,
  sparky: true,
  timers: { followUpHours: [48, 72], coldAfterDays: 7, renewalAfterDays: 365 },
});

/**
 * Book, no-show, re-engage; then only the clock: two follow-ups, cold; months later revived, closed; a year on,
 * renewal.due.
 */
const LONG = [
  { id: 'l1', memberId: 'member-long', type: 'agent.message_sent', time: '2025-01-06T09:00:00Z' },
  { id: 'l2', memberId: 'member-long', type: 'member.message_sent', time: '2025-01-06T12:00:00Z' },
  { id: 'l3', memberId: 'member-long', type: 'call.booked', time: '2025-01-07T10:00:00Z' },
  { id: 'l4', memberId: 'member-long', type: 'call.missed', time: '2025-01-09T10:00:00Z' },
  { id: 'l5', memberId: 'member-long', type: 'member.message_sent', time: '2025-01-10T08:00:00Z' },
  { clock: '2025-03-01T00:00:00Z' },
  {
    id: 'l6',
    memberId: 'member-long',
    type: 'member.message_sent',
    time: '2025-04-01T09:00:00Z',
    detail: { text: 'still interested' },
  },
  { id: 'l7', memberId: 'member-long', type: 'deal.closed', time: '2025-04-02T15:00:00Z', detail: { value: 12000 } },
]
  .map((l) => JSON.stringify(l))
  .join('\n');

/** A member's log with its timer names masked, to compare two runs of the same file under different member ids. */
const comparable = (events: LoggedEvent[], memberId: string) =>
  events.map((e) => [
    e.time,
    e.type,
    e.stateAfter,
    e.id.replaceAll(timerName('follow-up', memberId), 'T').replaceAll(timerName('renewal', memberId), 'R'),
  ]);

async function play(text: string, config: AgentConfig, until?: string) {
  const session = await LifecycleSession.start({ lifecycle: LIFECYCLE, dynamo: ddb, agentConfig: config });
  try {
    await session.replay(parseReplayFile(text, def).timeline, {
      clock: true,
      ...(until && { until }),
    });
  } finally {
    await session.stop();
  }
  expect(session.failedExecutions).toEqual([]);
  expect(session.sentDeadLetters).toEqual([]);
  expect(session.listenerDeadLetters).toEqual([]);
  expect(session.publishDeadLetters).toEqual({ outbox: [], timers: [] });
  return session;
}

describe('lifecycle timers on the emulated scheduler', () => {
  it('one deterministic year: books, no-shows, goes cold after N days, is revived, closes, and gets renewal.due a year later', async () => {
    const session = await play(LONG, worksOn, '2026-05-01T00:00:00Z');
    const member = (await entityHistory(session.store, session.definition, 'member-long'))!;
    expect(member.events.map((e) => [e.time, e.type, `${e.stateBefore}>${e.stateAfter}`])).toEqual([
      ['2025-01-06T09:00:00Z', 'agent.message_sent', 'idle>outreach'],
      ['2025-01-06T12:00:00Z', 'member.message_sent', 'outreach>engaged'],
      ['2025-01-07T10:00:00Z', 'call.booked', 'engaged>booked'],
      ['2025-01-09T10:00:00Z', 'call.missed', 'booked>no_show'],
      ['2025-01-10T08:00:00Z', 'member.message_sent', 'no_show>engaged'],
      // Only the clock from here: follow-up 1 after 48 h, follow-up 2 after 72 h more, cold 7 days after that.
      ['2025-01-12T08:00:00Z', 'agent.message_sent', 'engaged>engaged'],
      ['2025-01-15T08:00:00Z', 'agent.message_sent', 'engaged>engaged'],
      ['2025-01-22T08:00:00Z', 'follow_ups.exhausted', 'engaged>cold'],
      ['2025-04-01T09:00:00Z', 'member.message_sent', 'cold>engaged'],
      ['2025-04-02T15:00:00Z', 'deal.closed', 'engaged>closed'],
      ['2026-04-02T15:00:00Z', 'renewal.due', 'closed>renewal_due'],
    ]);
    expect(member).toMatchObject({ state: 'renewal_due', version: 9, conversation: 1, eventCount: 11 });
    // Timer events carry the version they were set at; both matched, so both applied.
    expect(member.events.find((e) => e.type === 'follow_ups.exhausted')!.detail).toMatchObject({ expectedVersion: 5 });
    expect(member.events.find((e) => e.type === 'renewal.due')!.detail).toMatchObject({
      expectedVersion: 8,
      timer: { version: 8 },
    });
    // Follow-ups went out through the agent's channel once each, keyed like their log entries.
    expect(session.followUpChannel.sent.map((m) => [m.followUp, m.version])).toEqual([
      [1, 5],
      [2, 5],
    ]);
    expect(session.followUpChannel.sent.map((m) => m.key)).toEqual(
      member.events.filter((e) => e.detail?.followUp !== undefined).map((e) => e.id),
    );
    // Stale chains (v1 outreach, v2 engaged: replaced or cancelled) never fired; nothing is left pending.
    expect(session.scheduler.fired.map((f) => [f.dueAt, f.detailType])).toEqual([
      ['2025-01-12T08:00:00Z', 'follow_up.due'],
      ['2025-01-15T08:00:00Z', 'follow_up.due'],
      ['2025-01-22T08:00:00Z', 'follow_up.due'],
      ['2026-04-02T15:00:00Z', 'renewal.due'],
    ]);
    expect(session.scheduler.pending).toEqual([]);
    expect(new Date(session.scheduler.now()).toISOString()).toBe('2026-05-01T00:00:00.000Z');
    // Every change reached the CRM through the outbox, timer-driven ones included.
    expect(session.crm.calls.map((c) => c.state)).toEqual([
      'outreach',
      'engaged',
      'booked',
      'no_show',
      'engaged',
      'cold',
      'engaged',
      'closed',
      'renewal_due',
    ]);

    // Deterministic: the same file plays to the same log and the same timers.
    const again = await play(LONG.replaceAll('member-long', 'member-long-2'), worksOn, '2026-05-01T00:00:00Z');
    const second = (await entityHistory(again.store, again.definition, 'member-long-2'))!;
    expect(comparable(second.events, 'member-long-2')).toEqual(comparable(member.events, 'member-long'));
  });

  it("with timers: the hand-off-cold agent's member goes cold after its follow-ups and the conversation is stopped", async () => {
    const text = JSON.stringify({
      id: 'h1',
      memberId: 'member-handoff',
      type: 'agent.message_sent',
      time: '2025-02-03T09:00:00Z',
    });
    const session = await play(text, agent('hand-off-cold'), '2025-03-01T00:00:00Z');
    const member = (await entityHistory(session.store, session.definition, 'member-handoff'))!;
    expect(member.events.map((e) => e.type)).toEqual([
      'agent.message_sent',
      'agent.message_sent',
      'agent.message_sent',
      'agent.message_sent',
      'follow_ups.exhausted',
      'conversation.stopped',
    ]);
    expect(member.events.at(-1)).toMatchObject({
      time: '2025-02-20T09:00:00Z',
      stateBefore: 'cold',
      stateAfter: 'stopped',
    });
    expect(session.notifier.sent.map((n) => n.subject)).toEqual(['Member member-handoff: stopped']);
  });

  it('drops a stale timer: a renewal.due of an older version (the member closed again since) is logged as refused and changes nothing', async () => {
    const closeThenMove = [
      { id: 's1', memberId: 'member-stale', type: 'member.message_sent', time: '2025-01-06T09:00:00Z' },
      { id: 's2', memberId: 'member-stale', type: 'deal.closed', time: '2025-01-06T10:00:00Z' },
      { id: 's3', memberId: 'member-stale', type: 'renewal.due', time: '2025-06-01T10:00:00Z' },
      { id: 's4', memberId: 'member-stale', type: 'deal.closed', time: '2025-06-02T10:00:00Z' },
    ]
      .map((l) => JSON.stringify(l))
      .join('\n');
    // The agent has a renewal timer of one year: the v2 (first close) renewal is replaced by the v4 one; a v2 renewal.due
    // delivered anyway (the at-least-once race) is refused.
    const session = await play(
      `${closeThenMove}\n${JSON.stringify({ id: 'late', memberId: 'member-stale', type: 'renewal.due', time: '2026-01-06T10:00:00Z', detail: { expectedVersion: 2 } })}`,
      worksOn,
      '2026-06-03T00:00:00Z',
    );
    const member = (await entityHistory(session.store, session.definition, 'member-stale'))!;
    expect(member.events.find((e) => e.id === 'late')).toMatchObject({
      stateBefore: 'closed',
      stateAfter: 'closed',
      actions: [{ type: 'refuse', reason: 'stale: expected version 2, the member is at version 4' }],
    });
    // Only the renewal set at the second close fired, a year after it.
    expect(session.scheduler.fired.filter((f) => f.kind === 'renewal').map((f) => f.dueAt)).toEqual([
      '2026-06-02T10:00:00Z',
    ]);
    expect(member).toMatchObject({ state: 'renewal_due', version: 5 });
  });

  it('without the clock, timers are set but never fire', async () => {
    const session = await LifecycleSession.start({ lifecycle: LIFECYCLE, store: 'memory', agentConfig: worksOn });
    try {
      await session.replay(parseReplayFile(LONG, def).timeline);
    } finally {
      await session.stop();
    }
    expect(session.scheduler.fired).toEqual([]);
    expect(session.scheduler.pending.map((t) => t.kind)).toEqual(['renewal']);
    expect((await session.store.getEntity('member-long'))!.state).toBe('closed');
  });
});
