/** The pause store on its own: what a resumer is told when the pause it wants is gone. */
import { describe, expect, it } from 'vitest';
import { ExecutionClaimedError } from '../../../src/core/errors.ts';
import { type PausedTask, PauseStore } from '../../../src/local/records/pauses.ts';
import { useTempDirs } from '../../support/tmp.ts';

const tempDir = useTempDirs('stepwise-pauses-');

const pause = (name: string): PausedTask => ({
  executionArn: `arn:aws:states:us-east-1:000000000000:execution:sm:${name}`,
  name,
  stateMachine: 'arn:aws:states:us-east-1:000000000000:stateMachine:sm',
  stack: 'Stack',
  state: 'Checkpoint',
  stateInput: {},
  request: {},
  taskToken: 'local:token',
  pausedAt: '2026-01-01T00:00:00.000Z',
  lastHeartbeatAt: '2026-01-01T00:00:00.000Z',
  executionInput: {},
  startTime: '2026-01-01T00:00:00.000Z',
  events: [],
});

describe.each([
  ['in files', () => tempDir()],
  ['in memory', () => false as const],
])('a pause store %s', (_where, dir) => {
  it('tells a resumer that comes after another resume ran the execution, not that it never existed', () => {
    const store = new PauseStore(dir());
    store.save(pause('run-1'));
    expect(store.require('run-1').name).toBe('run-1');
    store.delete('run-1');
    const late = () => store.require('run-1');
    expect(late).toThrow(ExecutionClaimedError);
    expect(late).toThrow(
      new RegExp(
        `^execution "run-1" was already resumed \\(by process ${process.pid} on [^)]+, ended [^)]+\\); its task token can be used once$`,
      ),
    );
    expect(() => store.heartbeat('run-1')).toThrow(ExecutionClaimedError);
  });

  it('says an execution that was never paused does not exist', () => {
    expect(() => new PauseStore(dir()).require('run-2')).toThrow(
      expect.objectContaining({
        name: 'ExecutionDoesNotExist',
        message: expect.stringMatching(/^no paused local execution "run-2"/),
      }),
    );
  });
});

it('a later process reads who resumed it from the folder', () => {
  const dir = tempDir();
  const first = new PauseStore(dir);
  first.save(pause('run-3'));
  first.delete('run-3');
  expect(() => new PauseStore(dir).require('run-3')).toThrow(/^execution "run-3" was already resumed/);
  expect(new PauseStore(dir).list()).toEqual([]);
});
