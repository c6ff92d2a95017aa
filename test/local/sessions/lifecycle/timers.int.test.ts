/**
 * Lead timers end to end on the local stack (bus, Express state machine, DynamoDB Local, outbox
 * pipe, listeners) with the EventBridge Scheduler emulation on an injected clock: follow-ups are
 * sent and logged, the lead goes cold after the last one, renewals come due a year after the
 * close, and stale timers are dropped. Months play in milliseconds and every run is the same.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AgentConfig, AgentConfigSchema } from '../../../../src/definitions/lifecycle/agent-config.ts';
import { loadAgentConfig, loadLifecycle } from '../../../../src/definitions/lifecycle/loader.ts';
import { sessionDynamoDb } from '../../../../src/local/cloud/dynamodb-connection.ts';
import type { DynamoDbLocal } from '../../../../src/local/cloud/dynamodb-local.ts';
import { LifecycleSession, parseReplayFile } from '../../../../src/local/sessions/lifecycle-session.ts';
import { entityHistory } from '../../../../src/runtime/lifecycle/queries.ts';
import { timerName } from '../../../../src/runtime/lifecycle/timers.ts';

let ddb: DynamoDbLocal;
beforeAll(async () => {
  ddb = await sessionDynamoDb();
});
afterAll(async () => {
  await ddb?.stop();
});

/**
 * Works the lead indefinitely, revives cold leads (Sparky): follow-ups after 2 and 3 days, cold a week after the last,
 * renewal a year after the close.
 */
const agent = AgentConfigSchema.parse({
  goal: null,
  sparky: true,
  timers: { followUpHours: [48, 72], coldAfterDays: 7, renewalAfterDays: 365 },
});

/**
 * Book, no-show, re-engage; then only the clock: two follow-ups, cold; months later revived, closed; a year on,
 * renewal.due.
 */
const LONG = [
  { id: 'l1', leadId: 'lead-long', type: 'agent.message_sent', time: '2025-01-06T09:00:00Z' },
  { id: 'l2', leadId: 'lead-long', type: 'lead.message_sent', time: '2025-01-06T12:00:00Z' },
  { id: 'l3', leadId: 'lead-long', type: 'meeting.booked', time: '2025-01-07T10:00:00Z' },
  { id: 'l4', leadId: 'lead-long', type: 'meeting.missed', time: '2025-01-09T10:00:00Z' },
  { id: 'l5', leadId: 'lead-long', type: 'lead.message_sent', time: '2025-01-10T08:00:00Z' },
  { clock: '2025-03-01T00:00:00Z' },
  {
    id: 'l6',
    leadId: 'lead-long',
    type: 'lead.message_sent',
    time: '2025-04-01T09:00:00Z',
    detail: { text: 'still interested' },
  },
  { id: 'l7', leadId: 'lead-long', type: 'deal.closed', time: '2025-04-02T15:00:00Z', detail: { value: 12000 } },
]
  .map((l) => JSON.stringify(l))
  .join('\n');

async function play(text: string, config: AgentConfig, until?: string) {
  const session = await LifecycleSession.start({ lifecycle: 'lead-lifecycle', dynamo: ddb, agentConfig: config });
  try {
    await session.replay(parseReplayFile(text, loadLifecycle('lead-lifecycle')).timeline, {
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

describe('lead timers on the emulated scheduler', () => {
  it('one deterministic year: books, no-shows, goes cold after N days, is revived, closes, and gets renewal.due a year later', async () => {
    const session = await play(LONG, agent, '2026-05-01T00:00:00Z');
    const lead = (await entityHistory(session.store, session.definition, 'lead-long'))!;
    expect(lead.events.map((e) => [e.time, e.type, `${e.stateBefore}>${e.stateAfter}`])).toEqual([
      ['2025-01-06T09:00:00Z', 'agent.message_sent', 'idle>outreach'],
      ['2025-01-06T12:00:00Z', 'lead.message_sent', 'outreach>engaged'],
      ['2025-01-07T10:00:00Z', 'meeting.booked', 'engaged>meeting_booked'],
      ['2025-01-09T10:00:00Z', 'meeting.missed', 'meeting_booked>no_show'],
      ['2025-01-10T08:00:00Z', 'lead.message_sent', 'no_show>engaged'],
      // Only the clock from here: follow-up 1 after 48 h, follow-up 2 after 72 h more, cold 7 days after that.
      ['2025-01-12T08:00:00Z', 'agent.message_sent', 'engaged>engaged'],
      ['2025-01-15T08:00:00Z', 'agent.message_sent', 'engaged>engaged'],
      ['2025-01-22T08:00:00Z', 'follow_ups.exhausted', 'engaged>cold'],
      ['2025-04-01T09:00:00Z', 'lead.message_sent', 'cold>engaged'],
      ['2025-04-02T15:00:00Z', 'deal.closed', 'engaged>deal_closed'],
      ['2026-04-02T15:00:00Z', 'renewal.due', 'deal_closed>renewal_due'],
    ]);
    expect(lead).toMatchObject({ state: 'renewal_due', version: 9, conversation: 1, eventCount: 11 });
    // Timer events carry the version they were set at; both matched, so both applied.
    expect(lead.events.find((e) => e.type === 'follow_ups.exhausted')!.detail).toMatchObject({ expectedVersion: 5 });
    expect(lead.events.find((e) => e.type === 'renewal.due')!.detail).toMatchObject({
      expectedVersion: 8,
      timer: { version: 8 },
    });
    // Follow-ups went out through the agent's channel once each, keyed like their log entries.
    expect(session.followUpChannel.sent.map((m) => [m.followUp, m.version])).toEqual([
      [1, 5],
      [2, 5],
    ]);
    expect(session.followUpChannel.sent.map((m) => m.key)).toEqual(
      lead.events.filter((e) => e.detail?.followUp !== undefined).map((e) => e.id),
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
      'meeting_booked',
      'no_show',
      'engaged',
      'cold',
      'engaged',
      'deal_closed',
      'renewal_due',
    ]);

    // Deterministic: the same file plays to the same log and the same timers.
    const again = await play(LONG.replaceAll('lead-long', 'lead-long-2'), agent, '2026-05-01T00:00:00Z');
    const second = (await entityHistory(again.store, again.definition, 'lead-long-2'))!;
    expect(
      second.events.map((e) => [
        e.time,
        e.type,
        e.stateAfter,
        e.id
          .replaceAll(timerName('follow-up', 'lead-long-2'), 'T')
          .replaceAll(timerName('renewal', 'lead-long-2'), 'R'),
      ]),
    ).toEqual(
      lead.events.map((e) => [
        e.time,
        e.type,
        e.stateAfter,
        e.id.replaceAll(timerName('follow-up', 'lead-long'), 'T').replaceAll(timerName('renewal', 'lead-long'), 'R'),
      ]),
    );
  });

  it("with timers: the hand-off-cold agent's lead goes cold after its follow-ups and the conversation is stopped", async () => {
    const text = JSON.stringify({
      id: 'h1',
      leadId: 'lead-handoff',
      type: 'agent.message_sent',
      time: '2025-02-03T09:00:00Z',
    });
    const session = await play(text, loadAgentConfig('hand-off-cold', 'lead-lifecycle'), '2025-03-01T00:00:00Z');
    const lead = (await entityHistory(session.store, session.definition, 'lead-handoff'))!;
    expect(lead.events.map((e) => e.type)).toEqual([
      'agent.message_sent',
      'agent.message_sent',
      'agent.message_sent',
      'agent.message_sent',
      'follow_ups.exhausted',
      'conversation.stopped',
    ]);
    expect(lead.events.at(-1)).toMatchObject({
      time: '2025-02-20T09:00:00Z',
      stateBefore: 'cold',
      stateAfter: 'conversation_stopped',
    });
    expect(session.notifier.sent.map((n) => n.subject)).toEqual(['Lead lead-handoff: conversation stopped']);
  });

  it('drops a stale timer: a renewal.due of an older version (the lead closed again since) is logged as refused and changes nothing', async () => {
    const closeThenMove = [
      { id: 's1', leadId: 'lead-stale', type: 'lead.message_sent', time: '2025-01-06T09:00:00Z' },
      { id: 's2', leadId: 'lead-stale', type: 'deal.closed', time: '2025-01-06T10:00:00Z' },
      { id: 's3', leadId: 'lead-stale', type: 'renewal.due', time: '2025-06-01T10:00:00Z' },
      { id: 's4', leadId: 'lead-stale', type: 'deal.closed', time: '2025-06-02T10:00:00Z' },
    ]
      .map((l) => JSON.stringify(l))
      .join('\n');
    // The agent has a renewal timer of one year: the v2 (first close) renewal is replaced by the v4 one; a v2 renewal.due
    // delivered anyway (the at-least-once race) is refused.
    const session = await play(
      `${closeThenMove}\n${JSON.stringify({ id: 'late', leadId: 'lead-stale', type: 'renewal.due', time: '2026-01-06T10:00:00Z', detail: { expectedVersion: 2 } })}`,
      agent,
      '2026-06-03T00:00:00Z',
    );
    const lead = (await entityHistory(session.store, session.definition, 'lead-stale'))!;
    expect(lead.events.find((e) => e.id === 'late')).toMatchObject({
      stateBefore: 'deal_closed',
      stateAfter: 'deal_closed',
      actions: [{ type: 'refuse', reason: 'stale: expected version 2, the lead is at version 4' }],
    });
    // Only the renewal set at the second close fired, a year after it.
    expect(session.scheduler.fired.filter((f) => f.kind === 'renewal').map((f) => f.dueAt)).toEqual([
      '2026-06-02T10:00:00Z',
    ]);
    expect(lead).toMatchObject({ state: 'renewal_due', version: 5 });
  });

  it('without the clock, timers are set but never fire', async () => {
    const session = await LifecycleSession.start({ lifecycle: 'lead-lifecycle', store: 'memory', agentConfig: agent });
    try {
      await session.replay(parseReplayFile(LONG, loadLifecycle('lead-lifecycle')).timeline);
    } finally {
      await session.stop();
    }
    expect(session.scheduler.fired).toEqual([]);
    expect(session.scheduler.pending.map((t) => t.kind)).toEqual(['renewal']);
    expect((await session.store.getEntity('lead-long'))!.state).toBe('deal_closed');
  });
});
