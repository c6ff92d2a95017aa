/**
 * A task token is used once: of several `stepwise resume` calls on one paused execution, in one
 * process or in several, exactly one runs the rest of the workflow; the others get a one-line
 * refusal. A name that is not an execution name is refused before any file is read.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ExecutionClaimedError } from '../../src/core/errors.ts';
import { PROJECT_ROOT } from '../../src/core/paths.ts';
import { PauseStore } from '../../src/local/records/pauses.ts';
import { type RunResult, WorkflowSession } from '../../src/local/sessions/workflow-session.ts';
import { stepwise } from '../support/project-copy.ts';
import { useBuiltProject, useTempDirs } from '../support/tmp.ts';
import { recordFigure } from './figures.ts';

const tempDir = useTempDirs('stepwise-resume-');
const sample = JSON.parse(
  readFileSync(join(PROJECT_ROOT, 'statemachines/investigation/samples/latency-checkpoint.json'), 'utf8'),
);
const RESUMERS = 3;
// The CLI as installed (compiled), in a copy of the project: the resumes start without tsx.
const project = useBuiltProject('stepwise-resume-cli-');

const sessions: WorkflowSession[] = [];
afterAll(() => Promise.all(sessions.map((s) => s.close())));

/**
 * A session of the investigation workflow keeping its pauses and histories in fresh folders, and one execution paused
 * at its checkpoint.
 */
async function pausedExecution(): Promise<{ session: WorkflowSession; pausesDir: string; name: string }> {
  const pausesDir = tempDir();
  const session = await WorkflowSession.start({
    workflow: 'investigation',
    logLevel: 'SILENT',
    pausesDir,
    historyDir: tempDir(),
  });
  sessions.push(session);
  const paused: RunResult = await session.runInput(sample, 'latency-checkpoint.json');
  expect(paused.status).toBe('PAUSED');
  return { session, pausesDir, name: paused.executionName! };
}

describe('concurrent resumes of one paused execution', () => {
  it('in one process: exactly one call runs it on, the others are refused while it runs', async () => {
    const { session, pausesDir, name } = await pausedExecution();
    const outcomes = await Promise.allSettled(
      Array.from({ length: RESUMERS }, (_, i) => session.resume(name, { output: { notes: `resumer ${i}` } })),
    );
    const ran = outcomes.flatMap((o) => (o.status === 'fulfilled' ? [o.value] : []));
    expect(ran).toHaveLength(1);
    expect(ran[0]!.status).toBe('SUCCEEDED');
    for (const o of outcomes.filter((o) => o.status === 'rejected')) {
      expect(o.reason).toBeInstanceOf(ExecutionClaimedError);
      expect((o.reason as Error).message).toMatch(new RegExp(`^execution "${name}" is already being resumed`));
    }
    // Done: no pause and no claim left, and a later resume is told that another one ran it.
    expect(existsSync(join(pausesDir, `${name}.json`))).toBe(false);
    expect(existsSync(join(pausesDir, `${name}.claim`))).toBe(false);
    await expect(session.resume(name, { output: {} })).rejects.toThrow(
      new RegExp(`^execution "${name}" was already resumed \\(by process ${process.pid} on `),
    );
  });

  it(`in ${RESUMERS} processes (stepwise resume): exactly one runs it on, the others exit 1 with one line`, async () => {
    const { pausesDir, name } = await pausedExecution();
    const runs = await Promise.all(
      Array.from({ length: RESUMERS }, (_, i) =>
        stepwise(
          project(),
          'resume',
          name,
          '--output',
          JSON.stringify({ notes: `resumer ${i}` }),
          '--dir',
          pausesDir,
          '--json',
        ),
      ),
    );
    const ran = runs.filter((r) => r.code === 0);
    recordFigure('concurrent resumes', `${ran.length} of ${RESUMERS} ran`);
    expect(ran).toHaveLength(1);
    expect(JSON.parse(ran[0]!.out)).toMatchObject({ status: 'SUCCEEDED', executionName: name });
    for (const refused of runs.filter((r) => r.code !== 0)) {
      // Refused while the winner ran, or after it finished: either way told that another resume has it.
      expect(refused.err.trim()).toMatch(
        new RegExp(`^stepwise: execution "${name}" (is already being|was already) resumed \\(by [^\\n]*$`),
      );
    }
    expect(existsSync(join(pausesDir, `${name}.json`))).toBe(false);
  }, 300_000);
});

describe('execution names', () => {
  it('refuses a name that is not an execution name before reading any file', async () => {
    const dir = tempDir();
    const pausesDir = join(dir, 'pauses');
    // A file outside the pauses folder that `../outside` would name.
    writeFileSync(join(dir, 'outside.json'), '{"not": "a pause"}');
    const names = ['../outside', '..', 'a/b', 'a\\b', 'x y'];
    const runs = await Promise.all(
      names.map((name) => stepwise(project(), 'resume', name, '--output', '{}', '--dir', pausesDir)),
    );
    runs.forEach((run, i) => {
      expect(run.code, names[i]).toBe(1);
      expect(run.err.trim(), names[i]).toBe(
        `stepwise: "${names[i]}" is not an execution name (stepwise executions lists the paused ones)`,
      );
    });
    const store = new PauseStore(pausesDir);
    for (const call of [
      () => store.get('../outside'),
      () => store.claim('..'),
      () => store.heartbeat('a/b'),
      () => store.delete('../outside'),
    ])
      expect(call).toThrow(/^Invalid Execution Name/);
    expect(existsSync(join(dir, 'outside.json'))).toBe(true);
  }, 120_000);
});
