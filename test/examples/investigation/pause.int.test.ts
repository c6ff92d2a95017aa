/**
 * The pause, locally: an execution suspends at the checkpoint, is persisted, and is resumed by a
 * later session (and a later process, through the CLI) through the same synthesized ASL - with an
 * output, a failure, after a heartbeat, or past its deadline into the escalation path.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { HistoryEvent } from '@aws-sdk/client-sfn';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../../src/core/paths.ts';
import { readLocalExecution } from '../../../src/local/records/history.ts';
import { type RunResult, WorkflowSession } from '../../../src/local/sessions/workflow-session.ts';
import { stepwise } from '../../support/project-copy.ts';
import { useBuiltProject, useTempDirs } from '../../support/tmp.ts';

const tempDir = useTempDirs('stepwise-pauses-');
const sample = JSON.parse(
  readFileSync(join(PROJECT_ROOT, 'statemachines/investigation/samples/latency-checkpoint.json'), 'utf8'),
);
const HOUR = 3600_000;

/** A session keeping pauses and histories in this test's folders. */
const session = (dirs: { pausesDir: string; historyDir: string }) =>
  WorkflowSession.start({ workflow: 'investigation', logLevel: 'SILENT', ...dirs });
const names = (r: RunResult) => r.steps.map((s) => s.name);
const historyOf = (r: RunResult, historyDir: string) => readLocalExecution(r.executionName!, historyDir).events;

/** One execution history: one start, sequential ids, each event after the one it follows. */
function expectOneHistory(events: HistoryEvent[]): void {
  expect(events.filter((e) => e.type === 'ExecutionStarted')).toHaveLength(1);
  expect(events.map((e) => e.id)).toEqual(events.map((_, i) => i + 1));
  for (const e of events) expect(e.previousEventId!).toBeLessThan(e.id!);
}

describe('a checkpoint, suspended and resumed in a later session', () => {
  const dirs = { pausesDir: tempDir(), historyDir: tempDir() };
  let paused: RunResult;
  let resumed: RunResult;
  let persisted: { pause: unknown; history: string };

  beforeAll(async () => {
    const first = await session(dirs);
    try {
      paused = await first.runInput(sample, 'latency-checkpoint.json');
    } finally {
      await first.close();
    }
    persisted = {
      pause: JSON.parse(readFileSync(join(dirs.pausesDir, `${paused.executionName}.json`), 'utf8')),
      history: readLocalExecution(paused.executionName!, dirs.historyDir).status,
    };
    const later = await session(dirs);
    try {
      expect(later.pausedExecutions().map((p) => p.execution)).toEqual([paused.executionName]);
      resumed = await later.resume(paused.executionName!, {
        output: { notes: 'the 14:01 deploy disabled the CDN cache' },
      });
    } finally {
      await later.close();
    }
  });

  it('suspends at the pause Task with the required actions and a deadline, persisted under the pauses folder', () => {
    expect(paused.status).toBe('PAUSED');
    expect(names(paused)).toEqual(['00-propose-plan', '01-plan', '02-investigate', '03-record', '03-record.pause']);
    expect(paused.pause).toMatchObject({
      state: '03-record.pause',
      step: '03-record',
      next: '02-investigate',
      workflow: 'investigation',
    });
    expect(paused.pause!.requiredActions).toEqual(expect.arrayContaining([expect.stringMatching(/^Step 2 of 2/)]));
    expect(Date.parse(paused.pause!.deadline!) - Date.parse(paused.pause!.pausedAt)).toBe(HOUR);
    expect(persisted.pause).toMatchObject({
      state: '03-record.pause',
      stack: 'Stepwise-Investigation-dev',
      timeoutSeconds: 86400,
      heartbeatSeconds: 3600,
    });
    expect(persisted.history).toBe('RUNNING');
    // Resumed since: no longer paused.
    expect(existsSync(join(dirs.pausesDir, `${paused.executionName}.json`))).toBe(false);
  });

  it('continues through the same ASL with the output at data.checkpoint, and keeps one history', () => {
    expect(resumed.status).toBe('SUCCEEDED');
    expect(names(resumed)).toEqual([
      '00-propose-plan',
      '01-plan',
      '02-investigate',
      '03-record',
      '03-record.pause',
      '02-investigate',
      '03-record',
      '05-synthesize',
      '06-expert-analysis',
      '07-check-citations',
    ]);
    expect(resumed.steps[5]!.fields.findings).toBe(
      'Confirmed at the checkpoint: the 14:01 deploy disabled the CDN cache',
    );
    const events = historyOf(resumed, dirs.historyDir);
    expectOneHistory(events);
    const succeeded = events.find((e) => e.type === 'TaskSucceeded')!;
    expect(JSON.parse(succeeded.taskSucceededEventDetails!.output!)).toEqual({
      notes: 'the 14:01 deploy disabled the CDN cache',
    });
    expect(events.at(-1)!.type).toBe('ExecutionSucceeded');
  });
});

describe('resolving a checkpoint', () => {
  const dirs = { pausesDir: tempDir(), historyDir: tempDir() };
  let s: WorkflowSession;
  beforeAll(async () => {
    s = await session(dirs);
  });
  afterAll(() => s?.close());
  const pause = async () => {
    const r = await s.runInput(sample, 'latency-checkpoint.json');
    expect(r.status).toBe('PAUSED');
    return r;
  };

  it('with a failure (SendTaskFailure): the Catch sends it to the fallback with the error', async () => {
    const r = await s.resume((await pause()).executionName!, { error: 'CheckpointRejected', cause: 'not my incident' });
    expect(names(r).slice(-2)).toEqual(['03-record.pause', '04-escalate']);
    expect(r.steps.at(-2)!.error).toBe('CheckpointRejected: not my incident');
    expect(r.steps.at(-1)!.fields.escalation).toEqual({
      reason: 'a step failed (CheckpointRejected)',
      error: 'CheckpointRejected',
    });
  });

  it('after its deadline: the output is not accepted and the timeout goes to the escalation step', async () => {
    const p = await pause();
    const r = await s.resume(
      p.executionName!,
      { output: { notes: 'too late' } },
      { now: new Date(Date.now() + 2 * HOUR) },
    );
    expect(r.status).toBe('SUCCEEDED');
    expect(r.reason).toMatch(/the checkpoint had timed out/);
    expect(names(r).slice(-2)).toEqual(['03-record.pause', '04-escalate']);
    expect(r.steps.at(-1)!.fields.escalation).toMatchObject({
      error: 'States.Timeout',
      reason: 'the checkpoint was not resumed in time',
    });
    const events = historyOf(r, dirs.historyDir);
    expectOneHistory(events);
    expect(events.find((e) => e.type === 'TaskTimedOut')!.taskTimedOutEventDetails).toMatchObject({
      error: 'States.Timeout',
      resourceType: 'events',
    });
  });

  it('after a heartbeat: the heartbeat timeout restarts, so a later output is accepted', async () => {
    const p = await pause();
    const beat = s.runtime.heartbeat(p.executionName!, new Date(Date.now() + 0.9 * HOUR));
    expect(Date.parse(beat.lastHeartbeatAt)).toBeGreaterThan(Date.parse(beat.pausedAt));
    const r = await s.resume(
      p.executionName!,
      { output: { notes: 'checked' } },
      { now: new Date(Date.now() + 1.5 * HOUR) },
    );
    expect(r.reason).toBeUndefined();
    expect(names(r).at(-1)).toBe('07-check-citations');
    expect(() => s.runtime.heartbeat(p.executionName!)).toThrow(/was already resumed/);
  });

  it('refuses to resume an execution that is not paused', async () => {
    await expect(s.resume('no-such-execution', { output: {} })).rejects.toThrow(
      /no paused local execution "no-such-execution"/,
    );
  });
});

describe('the CLI, one process per command', () => {
  // The CLI as installed (compiled), in a copy of the project.
  const project = useBuiltProject('stepwise-pause-');

  it('runs to the checkpoint, lists it with its required actions, resumes it and shows one history', async () => {
    const ran = await stepwise(
      project(),
      'run',
      'investigation',
      '--input',
      'statemachines/investigation/samples/latency-checkpoint.json',
      '--json',
    );
    expect(ran.code).toBe(0);
    const [result] = JSON.parse(ran.out) as RunResult[];
    expect(result!.status).toBe('PAUSED');
    const name = result!.executionName!;

    const listed = await stepwise(project(), 'executions', '--json');
    const entry = (JSON.parse(listed.out) as { execution: string; requiredActions: unknown }[]).find(
      (p) => p.execution === name,
    );
    expect(entry?.requiredActions).toEqual(result!.pause!.requiredActions);

    const bad = await stepwise(project(), 'resume', name, '--output', '{not json');
    expect(bad.code).toBe(1);
    expect(bad.err).toMatch(/^stepwise: --output is not JSON/);

    const resumed = await stepwise(project(), 'resume', name, '--output', '{"notes":"CDN cache off"}', '--json');
    expect(resumed.code).toBe(0);
    expect(JSON.parse(resumed.out)).toMatchObject({ status: 'SUCCEEDED', executionName: name });

    const history = await stepwise(project(), 'history', name);
    expect(history.out).toMatch(/SUCCEEDED/);
    expect(history.out).toContain('5. 03-record.pause');
    expect(history.out).toContain('9. 06-expert-analysis → 07-check-citations');
    expect(history.out).toContain('10. 07-check-citations → DONE');
  }, 300_000);
});
