/**
 * An event step end to end on the local runtime: the execution pauses at its wait Task; an event
 * put on the local bus with its key resumes it once; a second matching event, an event for no
 * execution and an event after the deadline resume nothing and are kept with their reasons; the
 * late one sends its execution down the timeout route. Nothing sleeps: the last event's time is
 * past the deadline.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { LocalRuntime } from '../../../src/local/asl/runtime.ts';
import type { LocalEventBus } from '../../../src/local/cloud/eventbridge/bus.ts';
import { type SynthesizedApp, synthesize } from '../../../src/local/cloud/synth.ts';
import { stepTrail } from '../../../src/local/records/history.ts';
import { LocalEventWaits, resumerBus } from '../../../src/local/sessions/event-waits.ts';
import { memoryEventLog } from '../../../src/runtime/event-log.ts';
import { memoryValueStore } from '../../../src/runtime/offload.ts';
import { addEventWorkflow, EVENT_STACK, EVENT_WORKFLOW, registerEventWorkflow } from '../../fixtures/event-workflow.ts';
import { FIXTURE_WORKFLOWS } from '../../fixtures/triage-plugin.ts';

let app: SynthesizedApp;
let runtime: LocalRuntime;
let waits: LocalEventWaits;
let bus: LocalEventBus;

beforeAll(async () => {
  registerEventWorkflow();
  app = synthesize((a) => void addEventWorkflow(a));
  runtime = await LocalRuntime.create({
    app,
    historyDir: false,
    retryDelayMs: 0,
    extraEnv: { STATEMACHINES_DIR: FIXTURE_WORKFLOWS, MODEL_PROVIDER: 'offline' },
    services: { events: memoryEventLog(), values: memoryValueStore() },
  });
  waits = new LocalEventWaits(runtime);
  // The bus a workflow session builds from its stack: the resumer's rules target `waits`.
  bus = resumerBus(app.templates[EVENT_STACK]!, waits)!;
});

const start = (orderId: string) => runtime.startExecution(`${EVENT_STACK}-${EVENT_WORKFLOW}`, { orderId });
const paid = (orderId: string, time?: Date) => ({
  Source: 'shop.payments',
  DetailType: 'PaymentReceived',
  Detail: JSON.stringify({ order: { id: orderId }, amount: 42 }),
  ...(time && { Time: time }),
});

describe('event step', () => {
  it('resumes once, and keeps every event that resumed nothing with its reason', async () => {
    const waiting = await start('A-1');
    expect(waiting.status).toBe('RUNNING');
    expect(waiting.pause?.state).toBe('01-await-payment.wait-event');

    const first = await bus.putEvents([paid('A-1')]);
    expect(first.FailedEntryCount).toBe(0);
    await bus.drain();
    const again = await bus.putEvents([paid('A-1')]);
    expect(again.FailedEntryCount).toBe(0);
    await bus.drain();
    await waits.send({ source: 'shop.payments', detailType: 'PaymentReceived', detail: { order: { id: 'Z-9' } } });

    const late = await start('B-2');
    const deadline = Date.parse(late.pause!.pausedAt) + 259_200_000;
    const { executions } = await waits.send({
      source: 'shop.payments',
      detailType: 'PaymentReceived',
      detail: { order: { id: 'B-2' }, amount: 7 },
      time: new Date(deadline + 1000),
    });

    const summary = waits.outcomes.map((o) => ({
      key: o.key,
      outcome: o.outcome,
      ...(o.outcome === 'unmatched' && { reason: o.reason }),
    }));
    expect(summary).toEqual([
      { key: 'A-1', outcome: 'resumed' },
      { key: 'A-1', outcome: 'unmatched', reason: 'already-resumed' },
      { key: undefined, outcome: 'unmatched', reason: 'no-waiting-execution' },
      { key: 'B-2', outcome: 'unmatched', reason: 'after-deadline' },
    ]);
    expect(waits.outcomes.filter((o) => o.outcome === 'resumed')).toHaveLength(1);
    expect(runtime.pausedExecutions()).toEqual([]);

    const timedOut = executions[0]!;
    expect(timedOut.status).toBe('SUCCEEDED');
    expect(stepTrail(timedOut.history).map((s) => s.name)).toContain('03-chase');
    const chased = (timedOut.output as { result: { data: { chased: { Error: string } } } }).result.data.chased;
    expect(chased.Error).toBe('States.Timeout');
  });

  it('routes only what an event step rule matches to the resumer', async () => {
    await start('E-5');
    const before = waits.outcomes.length;
    await bus.putEvents([{ ...paid('E-5'), Source: 'shop.refunds' }]);
    await bus.drain();
    expect(waits.outcomes.length).toBe(before);
    expect(runtime.pausedExecutions()).toHaveLength(1);
    await bus.putEvents([paid('E-5')]);
    await bus.drain();
    expect(waits.outcomes.slice(before).map((o) => o.outcome)).toEqual(['resumed']);
    expect(runtime.pausedExecutions()).toEqual([]);
  });

  it('hands the detail of the event to the next step', async () => {
    const waiting = await start('C-3');
    const { outcomes, executions } = await waits.send({
      source: 'shop.payments',
      detailType: 'PaymentReceived',
      detail: { order: { id: 'C-3' }, amount: 99 },
    });
    expect(outcomes.map((o) => o.outcome)).toEqual(['resumed']);
    const done = executions[0]!;
    expect(done.name).toBe(waiting.name);
    expect(done.status).toBe('SUCCEEDED');
    const data = (done.output as { result: { data: Record<string, unknown> } }).result.data;
    expect(data.payment).toEqual({ order: { id: 'C-3' }, amount: 99 });
    expect(data.confirmed).toBe('99');
  });

  it('resumes once when two matching events arrive at the same time', async () => {
    await start('D-4');
    const before = waits.outcomes.length;
    await bus.putEvents([paid('D-4'), paid('D-4')]);
    await bus.drain();
    const reasons = waits.outcomes
      .slice(before)
      .map((o) => (o.outcome === 'resumed' ? 'resumed' : o.reason))
      .sort();
    // The second finds the pause taken, or gone before the first's outcome is kept (no-waiting-execution), by timing.
    expect(reasons.filter((r) => r === 'resumed')).toHaveLength(1);
    expect(reasons).toHaveLength(2);
    expect(runtime.pausedExecutions()).toEqual([]);
  });
});
