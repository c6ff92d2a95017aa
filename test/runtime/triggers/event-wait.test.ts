/**
 * The deployed resumer's logic: a token recorded under its key is taken once; a second matching
 * event, an event for no execution, an event after the deadline and one without the key resume
 * nothing and are recorded with their reason; a second execution cannot wait on a live key.
 */
import { describe, expect, it } from 'vitest';
import { createHandler } from '../../../src/runtime/triggers/event-wait/handler.ts';
import {
  CorrelationKeyTakenError,
  memoryWaitTable,
  registerWait,
  type WaitDeclaration,
} from '../../../src/runtime/triggers/event-wait/waits.ts';

const T0 = new Date('2026-05-04T10:00:00.000Z');
const waits: WaitDeclaration[] = [
  { workflow: 'shop', step: '01-await', source: 'shop.payments', detailType: 'PaymentReceived', match: 'order.id' },
];
const request = (key: string, taskToken: string) => ({
  taskToken,
  workflow: 'shop',
  step: '01-await',
  execution: `exec-${key}`,
  source: 'shop.payments',
  detailType: 'PaymentReceived',
  match: 'order.id',
  key,
  timeoutSeconds: 3600,
});
const event = (id: string, detail: Record<string, unknown>) => ({
  id,
  source: 'shop.payments',
  'detail-type': 'PaymentReceived',
  time: T0.toISOString(),
  detail,
});

function resumer(now: () => Date) {
  const table = memoryWaitTable();
  const sent: { token: string; output: string }[] = [];
  const handle = createHandler(
    { WAITS_TABLE: 'tokens', EVENT_WAITS: JSON.stringify(waits), POWERTOOLS_LOG_LEVEL: 'SILENT' },
    { table, clock: now, sendSuccess: async (token, output) => (sent.push({ token, output }), true) },
  );
  return { table, sent, handle };
}

describe('event resumer', () => {
  it('resumes once; every other event is recorded with its reason', async () => {
    let now = T0;
    const { table, sent, handle } = resumer(() => now);
    await registerWait(request('A-1', 'token-a'), table, T0);
    await registerWait(request('B-2', 'token-b'), table, T0);

    const results = [
      ...(await handle(event('e1', { order: { id: 'A-1' }, amount: 5 }))),
      ...(await handle(event('e2', { order: { id: 'A-1' } }))),
      ...(await handle(event('e3', { order: { id: 'Z-9' } }))),
      ...(await handle(event('e4', { amount: 1 }))),
    ];
    now = new Date(T0.getTime() + 3_600_000);
    results.push(...(await handle(event('e5', { order: { id: 'B-2' } }))));

    expect(results.map((r) => [r.eventId, r.outcome === 'resumed' ? 'resumed' : r.reason])).toEqual([
      ['e1', 'resumed'],
      ['e2', 'no-waiting-execution'],
      ['e3', 'no-waiting-execution'],
      ['e4', 'no-key'],
      ['e5', 'after-deadline'],
    ]);
    expect(sent).toEqual([{ token: 'token-a', output: JSON.stringify({ order: { id: 'A-1' }, amount: 5 }) }]);
    expect(table.unmatched.map((u) => u.eventId)).toEqual(['e2', 'e3', 'e4', 'e5']);
  });

  it('lets one of two resumers that read the same record take it', async () => {
    const { table } = resumer(() => T0);
    await registerWait(request('A-1', 'token-a'), table, T0);
    const pk = 'wait#shop#01-await#A-1';
    expect(await Promise.all([table.take(pk, 'token-a'), table.take(pk, 'token-a')])).toEqual([true, false]);
  });

  it('records an event whose task already timed out as after the deadline', async () => {
    const table = memoryWaitTable();
    await registerWait(request('A-1', 'token-a'), table, T0);
    const handle = createHandler(
      { WAITS_TABLE: 'tokens', EVENT_WAITS: JSON.stringify(waits), POWERTOOLS_LOG_LEVEL: 'SILENT' },
      { table, clock: () => T0, sendSuccess: async () => false },
    );
    const [outcome] = await handle(event('e1', { order: { id: 'A-1' } }));
    expect(outcome).toMatchObject({ outcome: 'unmatched', reason: 'after-deadline', execution: 'exec-A-1' });
  });

  it('refuses a second execution waiting on a live key, and an event that is not one', async () => {
    const table = memoryWaitTable();
    await registerWait(request('A-1', 'token-a'), table, T0);
    await expect(registerWait(request('A-1', 'token-c'), table, T0)).rejects.toThrow(CorrelationKeyTakenError);
    await expect(
      registerWait(request('A-1', 'token-c'), table, new Date(T0.getTime() + 3_600_000)),
    ).resolves.toBeTruthy();
    const { handle } = resumer(() => T0);
    await expect(handle({ source: 'shop.payments', detail: 'text' })).rejects.toThrow(/not an EventBridge event/);
  });
});
