/**
 * Delayed transitions end to end on the local stack (bus, Express state machine, DynamoDB Local,
 * outbox pipe, timers listener) with EventBridge Scheduler emulated on a clock the test moves:
 * a 14-day refund window closes, a payment deadline read from the order's detail cancels it, a
 * parent's 30-day expiry outlives moves between its children, and leaving a state cancels its timers.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PACKAGE_ROOT } from '../../../../src/core/paths.ts';
import { sessionDynamoDb } from '../../../../src/local/cloud/dynamodb-connection.ts';
import type { DynamoDbLocal } from '../../../../src/local/cloud/dynamodb-local.ts';
import { LifecycleSession, parseReplayFile } from '../../../../src/local/sessions/lifecycle-session.ts';
import { entityHistory } from '../../../../src/runtime/lifecycle/queries.ts';

let ddb: DynamoDbLocal;
beforeAll(async () => {
  ddb = await sessionDynamoDb();
});
afterAll(async () => {
  await ddb?.stop();
});

const line = (id: string, orderId: string, type: string, time: string, detail?: object) =>
  JSON.stringify({ id, orderId, type, time, ...(detail && { detail }) });

const TIMELINE = [
  // Delivered, then only the clock: the 14-day refund window closes.
  line('a1', 'o-window', 'order.placed', '2025-05-01T10:00:00Z', { payWithin: '3d' }),
  line('a2', 'o-window', 'order.paid', '2025-05-02T10:00:00Z'),
  line('a3', 'o-window', 'order.delivered', '2025-05-06T08:30:00Z'),
  // Never paid: the payment window its checkout set (2 days) cancels it.
  line('b1', 'o-unpaid', 'order.placed', '2025-05-01T10:00:00Z', { payWithin: '2d' }),
  // A refund asked inside the window: leaving delivered cancels the window's timer.
  line('c1', 'o-refund', 'order.placed', '2025-05-01T10:00:00Z', { payWithin: '3d' }),
  line('c2', 'o-refund', 'order.paid', '2025-05-02T10:00:00Z'),
  line('c3', 'o-refund', 'order.delivered', '2025-05-06T08:30:00Z'),
  line('c4', 'o-refund', 'refund.requested', '2025-05-10T12:00:00Z'),
  // Paid but never delivered: the parent's 30-day expiry, set on placing, survives the move to paid.
  line('d1', 'o-stuck', 'order.placed', '2025-05-01T10:00:00Z', { payWithin: '3d' }),
  line('d2', 'o-stuck', 'order.paid', '2025-05-02T10:00:00Z'),
].join('\n');

describe('delayed transitions on the local runtime', () => {
  it('crosses 14 days, a deadline from the detail and a parent expiry by moving the clock, each once', {
    timeout: 180_000,
  }, async () => {
    const session = await LifecycleSession.start({
      lifecycle: 'order-refunds',
      root: join(PACKAGE_ROOT, 'test/fixtures/lifecycles'),
      dynamo: ddb,
    });
    try {
      await session.replay(parseReplayFile(TIMELINE, session.definition).timeline, {
        clock: true,
        until: '2025-07-01T00:00:00Z',
      });
    } finally {
      await session.stop();
    }
    expect(session.failedExecutions).toEqual([]);
    expect(session.sentDeadLetters).toEqual([]);
    expect(session.listenerDeadLetters).toEqual([]);
    expect(session.publishDeadLetters).toEqual({ outbox: [], timers: [] });

    const history = async (id: string) =>
      (await entityHistory(session.store, session.definition, id))!.events.map((e) => [
        e.time,
        e.type,
        `${e.stateBefore}>${e.stateAfter}`,
      ]);
    expect(await history('o-window')).toEqual([
      ['2025-05-01T10:00:00Z', 'order.placed', 'new>awaiting_payment'],
      ['2025-05-02T10:00:00Z', 'order.paid', 'awaiting_payment>paid'],
      ['2025-05-06T08:30:00Z', 'order.delivered', 'paid>delivered'],
      ['2025-05-20T08:30:00Z', 'after.delivered.14d', 'delivered>completed'],
    ]);
    expect(await history('o-unpaid')).toEqual([
      ['2025-05-01T10:00:00Z', 'order.placed', 'new>awaiting_payment'],
      ['2025-05-03T10:00:00Z', 'after.awaiting_payment.detail.payWithin', 'awaiting_payment>cancelled'],
    ]);
    expect((await history('o-refund')).at(-1)).toEqual([
      '2025-05-10T12:00:00Z',
      'refund.requested',
      'delivered>refunding',
    ]);
    expect(await history('o-stuck')).toEqual([
      ['2025-05-01T10:00:00Z', 'order.placed', 'new>awaiting_payment'],
      ['2025-05-02T10:00:00Z', 'order.paid', 'awaiting_payment>paid'],
      ['2025-05-31T10:00:00Z', 'after.open.30d', 'paid>expired'],
    ]);
    // Only those three timers fired; every other one was cancelled when its state was left.
    expect(session.scheduler.fired.map((f) => [f.dueAt, f.entityId, f.detailType])).toEqual([
      ['2025-05-03T10:00:00Z', 'o-unpaid', 'after.awaiting_payment.detail.payWithin'],
      ['2025-05-20T08:30:00Z', 'o-window', 'after.delivered.14d'],
      ['2025-05-31T10:00:00Z', 'o-stuck', 'after.open.30d'],
    ]);
    expect(session.scheduler.pending).toEqual([]);
  });
});
