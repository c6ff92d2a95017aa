// The orders lifecycle through the local runtime: its synthesized state machine, the local bus and
// an in-memory event store. Every event is applied, recorded as a duplicate, or reported.

import { replayLifecycle } from 'stepwise/testing';
import { expect, it } from 'vitest';

it('replays the sample orders: one delivered, one cancelled, nothing lost', async () => {
  const { entities, failures, malformed } = await replayLifecycle(
    'orders',
    'statemachines/orders/samples/orders.jsonl',
    { store: 'memory' },
  );
  expect(failures).toEqual([]);
  expect(malformed).toEqual([]);
  expect(entities['order-1']).toMatchObject({ state: 'delivered', eventCount: 4 });
  // A cancelled order is terminal: shipping it afterwards is logged, and changes nothing.
  expect(entities['order-2']).toMatchObject({ state: 'cancelled' });
});
