/**
 * `stepwise send-event` on the local runtime: executions of the event-step fixture pause in a
 * pauses folder; the command, run in-process as a person runs it, finds the one an event is for,
 * resumes it once through the synthesized ASL and appends every outcome to the events file. The
 * session around the runtime is the fixture's (the fixture is no workflow of this project): its
 * resumer is the same `LocalEventWaits` a workflow session builds. Nothing sleeps: the late event's
 * `--time` is past the deadline.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import * as sendEvent from '../../src/cli/commands/send-event.ts';
import { type LocalExecution, LocalRuntime } from '../../src/local/asl/runtime.ts';
import { synthesize } from '../../src/local/cloud/synth.ts';
import { stepTrail } from '../../src/local/records/history.ts';
import { fileLedger, LocalEventWaits, workflowPauses } from '../../src/local/sessions/event-waits.ts';
import { WorkflowSession } from '../../src/local/sessions/workflow-session.ts';
import { memoryEventLog } from '../../src/runtime/event-log.ts';
import { memoryValueStore } from '../../src/runtime/offload.ts';
import { addEventWorkflow, EVENT_STACK, EVENT_WORKFLOW, registerEventWorkflow } from '../fixtures/event-workflow.ts';
import { FIXTURE_WORKFLOWS } from '../fixtures/triage-plugin.ts';
import { runCli, useCliCapture } from '../support/cli.ts';
import { useTempDirs } from '../support/tmp.ts';

const io = useCliCapture();
const dir = useTempDirs('stepwise-send-event-')();
const pausesDir = join(dir, 'pauses');
const eventsFile = join(dir, 'events.jsonl');
let runtime: LocalRuntime;
const sessions: string[] = [];
/** The executions the sessions resumed (or timed out), in order. */
const runs: LocalExecution[] = [];

beforeAll(async () => {
  registerEventWorkflow();
  runtime = await LocalRuntime.create({
    app: synthesize((a) => void addEventWorkflow(a)),
    historyDir: false,
    pausesDir,
    retryDelayMs: 0,
    extraEnv: { STATEMACHINES_DIR: FIXTURE_WORKFLOWS, MODEL_PROVIDER: 'offline', POWERTOOLS_LOG_LEVEL: 'SILENT' },
    services: { events: memoryEventLog(), values: memoryValueStore() },
  });
});

beforeEach(() => {
  vi.spyOn(WorkflowSession, 'start').mockImplementation(async (options) => {
    sessions.push(options.workflow);
    const pauses = workflowPauses(runtime, options.workflow);
    const recording: typeof pauses = {
      pausedExecutions: () => pauses.pausedExecutions(),
      resumeExecution: async (...args) => {
        const run = await pauses.resumeExecution(...args);
        runs.push(run);
        return run;
      },
    };
    const eventWaits = new LocalEventWaits(recording, fileLedger(eventsFile));
    return { eventWaits, close: async () => {} } as unknown as WorkflowSession;
  });
});

const start = (orderId: string) => runtime.startExecution(`${EVENT_STACK}-${EVENT_WORKFLOW}`, { orderId });
const send = (...args: string[]) =>
  runCli(
    [sendEvent],
    'send-event',
    'shop.payments',
    'PaymentReceived',
    '--dir',
    pausesDir,
    '--events',
    eventsFile,
    ...args,
  );
const recorded = () =>
  readFileSync(eventsFile, 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as { key?: string; outcome: string; reason?: string });

describe('stepwise send-event', () => {
  it('resumes the matching execution once; a second event is recorded already-resumed', async () => {
    const waiting = await start('A-1');
    expect(waiting.pause?.state).toBe('01-await-payment.wait-event');

    expect(await send('--detail', '{"order":{"id":"A-1"},"amount":42}', '--json')).toBe(0);
    const [resumed] = JSON.parse(io.out) as Array<{ outcome: string; key: string; execution: string }>;
    expect(resumed).toMatchObject({ outcome: 'resumed', key: 'A-1', step: '01-await-payment' });
    expect(resumed!.execution).toBe(waiting.executionArn);
    expect(runtime.pausedExecutions()).toEqual([]);

    io.out = '';
    expect(await send('--detail', '{"order":{"id":"A-1"},"amount":42}')).toBe(0);
    expect(io.out).toBe(
      `PaymentReceived from shop.payments: unmatched (already-resumed) - 01-await-payment, key A-1, ${waiting.executionArn}\n`,
    );
    expect(recorded().map((o) => [o.key, o.outcome, o.reason])).toEqual([
      ['A-1', 'resumed', undefined],
      ['A-1', 'unmatched', 'already-resumed'],
    ]);
  });

  it('records an event no execution waits for, without starting a session', async () => {
    const before = sessions.length;
    const file = join(dir, 'detail.json');
    writeFileSync(file, '{"order":{"id":"Z-9"}}');
    expect(await send('--detail-file', file)).toBe(0);
    expect(io.out).toBe('PaymentReceived from shop.payments: unmatched (no-waiting-execution)\n');
    expect(sessions.length).toBe(before);
    expect(recorded().at(-1)).toMatchObject({ outcome: 'unmatched', reason: 'no-waiting-execution' });
  });

  it('sends an execution whose deadline passed down its timeout route', async () => {
    const late = await start('B-2');
    const after = new Date(Date.parse(late.pause!.pausedAt) + 259_200_000 + 1000).toISOString();
    expect(await send('--detail', '{"order":{"id":"B-2"}}', '--time', after, '--json')).toBe(0);
    expect(JSON.parse(io.out)).toEqual([expect.objectContaining({ outcome: 'unmatched', reason: 'after-deadline' })]);
    expect(runtime.pausedExecutions()).toEqual([]);
    const timedOut = runs.at(-1)!;
    expect(timedOut.name).toBe(late.name);
    expect(stepTrail(timedOut.history).map((s) => s.name)).toContain('03-chase');
    expect(recorded().at(-1)).toMatchObject({ key: 'B-2', reason: 'after-deadline' });
  });

  it.each([
    [['--detail', '{"order":'], /^stepwise: the detail is not JSON: /],
    [['--detail', '[1,2]'], /^stepwise: the detail must be a JSON object$/],
    [['--detail', '"text"'], /^stepwise: the detail must be a JSON object$/],
    [[], /^stepwise: give exactly one of --detail JSON, --detail-file FILE$/],
    [['--detail', '{}', '--time', 'yesterday'], /^stepwise: --time is not an ISO date and time: yesterday$/],
  ])('refuses bad input %j in one line, exit 1, recording nothing', async (args, message) => {
    const lines = recorded().length;
    expect(await send(...args)).toBe(1);
    expect(io.err.trim().split('\n')).toHaveLength(1);
    expect(io.err.trim()).toMatch(message);
    expect(recorded()).toHaveLength(lines);
  });
});
