/**
 * `stepwise history` and `stepwise executions` as a person reads them: short runs in ms, paused ones PAUSED, actions as
 * text.
 */
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import * as executions from '../../src/cli/commands/executions.ts';
import * as history from '../../src/cli/commands/history.ts';
import { pauseLines } from '../../src/cli/session-output.ts';
import { loadWorkflow } from '../../src/definitions/workflow/loader.ts';
import type { ExecutionRecord } from '../../src/local/records/history.ts';
import { type PauseSummary, WorkflowSession } from '../../src/local/sessions/workflow-session.ts';
import { runCli, useCliCapture } from '../support/cli.ts';
import { useTempDirs } from '../support/tmp.ts';

const tempDir = useTempDirs('stepwise-history-');
const io = useCliCapture();

describe('stepwise history', () => {
  it('shows a run shorter than a second in milliseconds, a longer one in seconds', () => {
    const record = (ms: number): ExecutionRecord => ({
      executionArn: 'arn:aws:states:us-east-1:000000000000:execution:M:e1',
      name: 'e1',
      stateMachine: 'arn:aws:states:us-east-1:000000000000:stateMachine:M',
      status: 'SUCCEEDED',
      startDate: new Date(0),
      stopDate: new Date(ms),
      input: {},
      events: [],
    });
    expect(history.formatExecution(record(49)).split('\n')[0]).toBe(
      'e1 SUCCEEDED in 49 ms: 0 steps, 0 state transitions',
    );
    expect(history.formatExecution(record(2345)).split('\n')[0]).toBe(
      'e1 SUCCEEDED in 2.3 s: 0 steps, 0 state transitions',
    );
  });

  describe('of a paused execution', () => {
    const historyDir = tempDir();
    const pausesDir = tempDir();
    let name = '';
    beforeAll(async () => {
      const session = await WorkflowSession.start({
        workflow: 'checkpoint-review',
        logLevel: 'SILENT',
        historyDir,
        pausesDir,
      });
      try {
        const [result] = await session.runFiles([
          join(loadWorkflow('checkpoint-review').dir, 'samples', 'checkpoint.json'),
        ]);
        expect(result!.status).toBe('PAUSED');
        name = result!.executionName!;
      } finally {
        await session.close();
      }
    }, 120_000);

    it('is PAUSED at its checkpoint, not RUNNING', async () => {
      expect(await runCli([history], 'history', name, '--dir', historyDir, '--pauses', pausesDir)).toBe(0);
      expect(io.out.split('\n')[0]).toMatch(
        new RegExp(`^${name} \\(checkpoint-review\\) PAUSED at 03-record\\.pause: \\d+ steps`),
      );
      io.out = '';
      expect(await runCli([history], 'history', name, '--dir', historyDir, '--pauses', pausesDir, '--json')).toBe(0);
      expect(JSON.parse(io.out).status).toBe('PAUSED');
    });

    it('stepwise executions lists its required actions as plain text', async () => {
      expect(await runCli([executions], 'executions', '--dir', pausesDir)).toBe(0);
      const actions = io.out.split('\n').filter((l) => l.startsWith('  - '));
      expect(actions.length).toBeGreaterThan(0);
      for (const line of actions) expect(line).not.toMatch(/["{}[\]]/);
    });
  });
});

describe('required actions', () => {
  const pause = (requiredActions: unknown): PauseSummary => ({
    execution: 'e1',
    workflow: 'w',
    state: 's.pause',
    requiredActions,
    pausedAt: '',
    deadline: null,
    resume: 'stepwise resume e1',
  });
  it.each([
    ['a list of texts', ['Read the logs', 'Call the owner'], ['  - Read the logs', '  - Call the owner']],
    ['one text', 'Read the logs', ['  - Read the logs']],
    ['an object', { owner: 'ops', deadline: 'today' }, ['  - owner: ops', '  - deadline: today']],
  ])('%s reads without JSON quotes', (_what, value, lines) => {
    expect(pauseLines(pause(value)).filter((l) => l.startsWith('  - '))).toEqual(lines);
  });
});
