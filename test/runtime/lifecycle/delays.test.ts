/**
 * Delayed transitions at run time (pure): which schedules a state change sets, cancels and
 * re-arms, and how the transition treats the events their timers deliver.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PACKAGE_ROOT } from '../../../src/core/paths.ts';
import { loadLifecycle, NO_AGENT } from '../../../src/definitions/lifecycle/loader.ts';
import type { EntitySnapshot, LifecycleEvent } from '../../../src/definitions/lifecycle/schema.ts';
import { type StateChangedDetail, stateChangeOf } from '../../../src/runtime/lifecycle/state-changes.ts';
import { timerName, timersForChange } from '../../../src/runtime/lifecycle/timers.ts';
import { applyEvent, initialSnapshot } from '../../../src/runtime/lifecycle/transition.ts';

const def = loadLifecycle('order-refunds', join(PACKAGE_ROOT, 'test/fixtures/lifecycles'));

type Step = [type: string, time: string, detail?: LifecycleEvent['detail']];

/** Apply the steps to a new order; its snapshot and the change of the last step. */
function order(steps: Step[], from: EntitySnapshot = initialSnapshot(def)) {
  let snapshot = from;
  let change: StateChangedDetail | undefined;
  steps.forEach(([type, time, detail], i) => {
    const event: LifecycleEvent = {
      id: `e${snapshot.eventCount + i}`,
      entityId: 'o-1',
      type,
      time,
      ...(detail && { detail }),
    };
    const r = applyEvent(def, snapshot, event, NO_AGENT);
    change = stateChangeOf(def, snapshot, r);
    snapshot = r.snapshot;
  });
  return { snapshot, change: change! };
}

const PLACED: Step = ['order.placed', '2025-05-01T10:00:00Z', { payWithin: '3d' }];
const PAID: Step = ['order.paid', '2025-05-02T10:00:00Z'];
const DELIVERED: Step = ['order.delivered', '2025-05-06T08:30:00Z'];
const name = (type: string) => timerName('after', 'o-1', type);

describe('timersForChange with delayed transitions', () => {
  it('entering a state sets its timers: a fixed delay, and one read from the entering event, guarded by the version', () => {
    const plan = timersForChange(def, undefined, order([PLACED]).change);
    expect(plan.cancel).toEqual([]);
    expect(plan.set).toEqual([
      {
        name: name('after.open.30d'),
        kind: 'after',
        entityId: 'o-1',
        dueAt: '2025-05-31T10:00:00Z',
        stamp: { version: 1, setAt: '2025-05-01T10:00:00Z', step: 0 },
        delivery: {
          source: 'stepwise.scheduler',
          detailType: 'after.open.30d',
          detail: { orderId: 'o-1', eventId: `${name('after.open.30d')}:v1`, expectedVersion: 1 },
        },
      },
      expect.objectContaining({
        name: name('after.awaiting_payment.detail.payWithin'),
        dueAt: '2025-05-04T10:00:00Z',
        delivery: expect.objectContaining({ detailType: 'after.awaiting_payment.detail.payWithin' }),
      }),
    ]);
    expect(name('after.open.30d')).not.toBe(name('after.awaiting_payment.detail.payWithin'));
  });

  it("moving between a parent's children re-arms the parent's timer and cancels the child's", () => {
    const plan = timersForChange(def, undefined, order([PLACED, PAID]).change);
    expect(plan).toEqual({
      set: [],
      cancel: [name('after.awaiting_payment.detail.payWithin')],
      unscheduled: [],
      restamp: [{ name: name('after.open.30d'), version: 2 }],
    });
  });

  it('leaving the parent cancels its timer; entering delivered sets the 14-day window', () => {
    const plan = timersForChange(def, undefined, order([PLACED, PAID, DELIVERED]).change);
    expect(plan.cancel).toEqual([name('after.open.30d')]);
    expect(plan.set.map((t) => [t.delivery.detailType, t.dueAt])).toEqual([
      ['after.delivered.14d', '2025-05-20T08:30:00Z'],
    ]);
  });

  it.each([
    [{}, 'detail.payWithin holds no duration'],
    [{ payWithin: 3 }, 'detail.payWithin holds no duration'],
    [{ payWithin: 'three days' }, 'detail.payWithin "three days" is not a duration'],
  ])('sets no timer for a detail delay the entering event does not give (%j), and says why', (detail, reason) => {
    const plan = timersForChange(def, undefined, order([['order.placed', '2025-05-01T10:00:00Z', detail]]).change);
    expect(plan.set.map((t) => t.delivery.detailType)).toEqual(['after.open.30d']);
    expect(plan.unscheduled).toEqual([{ type: 'after.awaiting_payment.detail.payWithin', reason }]);
  });
});

describe('the transition with delayed transitions', () => {
  const delivered = order([PLACED, PAID, DELIVERED]).snapshot;
  const due = (detail: LifecycleEvent['detail']): LifecycleEvent => ({
    id: 't1',
    entityId: 'o-1',
    type: 'after.delivered.14d',
    time: '2025-05-20T08:30:00Z',
    ...(detail && { detail }),
  });

  it("applies its timer's event at the version it was set", () => {
    const r = applyEvent(def, delivered, due({ expectedVersion: delivered.version }), NO_AGENT);
    expect(r.snapshot.state).toBe('completed');
  });

  it('refuses it when the order moved on since, or when it did not come from the timer', () => {
    const stale = applyEvent(def, delivered, due({ expectedVersion: delivered.version - 1 }), NO_AGENT);
    expect(stale.snapshot.state).toBe('delivered');
    expect(stale.events[0]!.actions).toEqual([
      { type: 'refuse', reason: `stale: expected version ${delivered.version - 1}, the order is at version 3` },
    ]);
    const forged = applyEvent(def, delivered, due(undefined), NO_AGENT);
    expect(forged.snapshot.state).toBe('delivered');
    expect(forged.events[0]!.actions[0]).toMatchObject({
      type: 'refuse',
      reason: expect.stringContaining("only the timer of delivered's delayed transition applies it"),
    });
  });

  it('logs a timer of a state the order is no longer in, changing nothing', () => {
    const r = applyEvent(def, delivered, { ...due({ expectedVersion: 3 }), type: 'after.open.30d' }, NO_AGENT);
    expect(r.snapshot.state).toBe('delivered');
    expect(r.events[0]!.stateAfter).toBe('delivered');
  });
});
