/**
 * The construct steps end to end on the local runtime: the synthesized ASL of the fixture
 * workflows, run with the real step handler and the fixtures' code steps. Items fan out and join
 * in order with a failed item reported; branches join under their names or hand off naming the
 * failed one; a three-day wait and a wait until a timestamp move the session clock, not the test;
 * a workflow step runs its child in the same session, both histories linking to each other.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { childExecutionArns, parentExecutionArn } from '../../../src/local/asl/child-executions.ts';
import { type LocalExecution, LocalRuntime } from '../../../src/local/asl/runtime.ts';
import { sessionClock } from '../../../src/local/asl/waits.ts';
import { synthesize } from '../../../src/local/cloud/synth.ts';
import { stepTrail } from '../../../src/local/records/history.ts';
import { memoryEventLog } from '../../../src/runtime/event-log.ts';
import { memoryValueStore } from '../../../src/runtime/offload.ts';
import {
  addConstructWorkflows,
  CONSTRUCTS_STACK,
  registerConstructWorkflows,
} from '../../fixtures/construct-workflows.ts';
import { FIXTURE_WORKFLOWS } from '../../fixtures/triage-plugin.ts';

const START = new Date('2026-03-02T09:00:00.000Z');
const events = memoryEventLog();
const clock = sessionClock(START);
let runtime: LocalRuntime;

beforeAll(async () => {
  registerConstructWorkflows();
  runtime = await LocalRuntime.create({
    app: synthesize(addConstructWorkflows),
    historyDir: false,
    retryDelayMs: 0,
    clock,
    extraEnv: { STATEMACHINES_DIR: FIXTURE_WORKFLOWS, MODEL_PROVIDER: 'offline' },
    services: { events, values: memoryValueStore() },
  });
});

const run = (workflow: string, input: unknown) => runtime.startExecution(`${CONSTRUCTS_STACK}-${workflow}`, input);
const result = (e: LocalExecution) => (e.output as { result: { fields: any; data: any; count: number } }).result;
const steps = (e: LocalExecution) => stepTrail(e.history).map((s) => s.name);

describe('map', () => {
  const names = ['a.pdf', 'b.jpg', 'broken', 'd.pdf'];

  it('runs the chain once per item and joins the results in item order, the failed item reported', async () => {
    const execution = await run('fan-out', { attachments: names.map((name) => ({ name })) });
    expect(JSON.stringify(execution.error)).toBeUndefined();
    expect(execution.status).toBe('SUCCEEDED');
    const { data, count } = result(execution);
    expect(data.classifications).toEqual([
      { index: 0, ok: true, step: '02-classify', fields: { label: 'invoice' } },
      { index: 1, ok: true, step: '02-classify', fields: { label: 'photo' } },
      {
        index: 2,
        ok: false,
        error: { Error: 'StepFailedError', Cause: expect.stringContaining('cannot read broken') },
      },
      { index: 3, ok: true, step: '02-classify', fields: { label: 'invoice' } },
    ]);
    expect(result(execution).fields).toEqual({ summary: '3 of 4 classified' });
    // The map step, its longest item (one step) and the summary.
    expect(count).toBe(3);
    expect(steps(execution).filter((s) => s === '02-classify')).toHaveLength(4);
    expect(execution.history.filter((e) => e.type === 'MapIterationStarted')).toHaveLength(4);
    // Each item's step knows its item: its side effects are idempotent per item, not per step.
    const items = stepTrail(execution.history).filter((s) => s.name === '02-classify');
    expect(items.map((s) => (s.input as { item?: unknown }).item)).toEqual(
      expect.arrayContaining([0, 1, 2, 3].map((index) => ({ map: '01-classify-all', index }))),
    );
    // The event log keeps one event per item that completed (the broken one failed).
    const logged = (await events.list(execution.name)).flatMap((e) => (e.type === 'StepCompleted' ? [e] : []));
    expect(
      logged
        .filter((e) => e.step === '02-classify')
        .map((e) => e.item)
        .sort(),
    ).toEqual(['01-classify-all#0', '01-classify-all#1', '01-classify-all#3']);
    expect(logged.map((e) => e.step)).toEqual(expect.arrayContaining(['01-classify-all', '03-summarize']));
  });

  it('hands off when more items fail than it tolerates, or when there are more than maxItems', async () => {
    const failing = await run('fan-out', { attachments: [{ name: 'broken' }, { name: 'broken' }, { name: 'a.pdf' }] });
    expect(failing.status).toBe('SUCCEEDED');
    expect(steps(failing).at(-1)).toBe('99-hand-off');
    expect(result(failing).fields.handedOff).toMatchObject({
      Error: 'ItemsFailedError',
      Cause: expect.stringContaining('2 of 3 items failed (tolerated: 1)'),
    });
    const many = await run('fan-out', { attachments: Array.from({ length: 121 }, (_, i) => ({ name: `${i}.pdf` })) });
    expect(result(many).fields.handedOff).toMatchObject({ Error: 'TooManyItems' });
    expect(many.history.some((e) => e.type === 'MapStateStarted')).toBe(false);
  });
});

describe('parallel', () => {
  it('runs both branches and merges each branch result under its name', async () => {
    const execution = await run('lookups', { orderId: 'O-1' });
    expect(execution.status).toBe('SUCCEEDED');
    expect(result(execution).data).toMatchObject({
      customer: { name: 'Ada' },
      order: { status: 'paid, shipped', carrier: 'DHL' },
    });
    expect(result(execution).fields).toEqual({ reply: 'Ada: paid, shipped (DHL)' });
    // The parallel step, its longest branch (order, then shipment) and the reply.
    expect(result(execution).count).toBe(4);
  });

  it('hands a failed branch to the fallback, naming the branch', async () => {
    const execution = await run('lookups', { orderId: 'O-2', failOrder: true });
    expect(steps(execution).at(-1)).toBe('99-hand-off');
    expect(result(execution).fields.handedOff).toMatchObject({
      Error: 'BranchFailedError',
      Cause: expect.stringContaining('01-look-up: branch order failed: StepFailedError: order O-2 not found'),
    });
  });
});

describe('wait', () => {
  it('crosses three days and then a timestamp by moving the session clock', async () => {
    const before = clock.now().getTime();
    const remindAt = new Date(before + 5 * 86_400_000).toISOString();
    const execution = await run('reminder', { remindAt });
    expect(execution.status).toBe('SUCCEEDED');
    expect(result(execution).fields).toEqual({ reminded: true });
    expect(clock.now().toISOString()).toBe(remindAt);
    expect(execution.history.filter((e) => e.type === 'WaitStateEntered')).toHaveLength(2);
  });

  it('moves the clock by the seconds when the timestamp is already past', async () => {
    const before = clock.now().getTime();
    await run('reminder', { remindAt: START.toISOString() });
    expect(clock.now().getTime() - before).toBe(259_200_000);
  });

  it('hands a malformed timestamp to the fallback', async () => {
    const execution = await run('reminder', { remindAt: 'next tuesday' });
    expect(result(execution).fields.handedOff).toMatchObject({ Error: 'InvalidTimestamp' });
  });
});

describe('workflow step', () => {
  it('runs the child in the same session and takes its declared outputs; the histories link both ways', async () => {
    const parent = await run('parent-call', { subject: 'refund' });
    expect(parent.status).toBe('SUCCEEDED');
    expect(result(parent).fields).toEqual({ reply: 'ticket T-6' });
    expect(result(parent).data.ticketId).toBe('T-6');
    const [childArn] = childExecutionArns(parent.history);
    expect(childArn).toMatch(new RegExp(`:execution:${CONSTRUCTS_STACK}-child-ticket:`));
    const started = parent.history.find((e) => e.type === 'ExecutionStarted')!;
    expect(started).toBeDefined();
    const child = runtime.stateMachine(`${CONSTRUCTS_STACK}-child-ticket`);
    expect(child.name).toBe(`${CONSTRUCTS_STACK}-child-ticket`);
    const childInput = JSON.parse(
      parent.history.find((e) => e.type === 'TaskSucceeded')!.taskSucceededEventDetails!.output as string,
    ).Input;
    expect(parentExecutionArn(childInput)).toBe(parent.executionArn);
  });

  it('hands off when the child ends without a declared output', async () => {
    const parent = await run('parent-call', { subject: 'fail' });
    expect(parent.status).toBe('SUCCEEDED');
    expect(result(parent).fields.handedOff).toMatchObject({ Error: 'MissingChildOutput' });
  });
});
