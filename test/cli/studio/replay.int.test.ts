/**
 * Replay and fork through the local runtime: a recorded warranty execution forked from
 * 02-check-warranty with the registry answering `expired` takes 03c; an edited step input changes
 * what the step does; the fork is stored linked to its parent with the parent's history before the
 * fork point; `stepwise replay` does the same from the command line.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as replayCommand from '../../../src/cli/commands/replay.ts';
import * as runCommand from '../../../src/cli/commands/run.ts';
import { STATEMACHINES_DIR } from '../../../src/core/paths.ts';
import { loadWorkflow } from '../../../src/definitions/workflow/loader.ts';
import { diffExecutions } from '../../../src/local/records/fork.ts';
import { type ExecutionRecord, readLocalExecution, readStoredExecution } from '../../../src/local/records/history.ts';
import { stateDirs } from '../../../src/local/records/state-dirs.ts';
import { replay } from '../../../src/local/sessions/replay.ts';
import { WorkflowSession } from '../../../src/local/sessions/workflow-session.ts';
import { runCli, useCliCapture } from '../../support/cli.ts';

const SAMPLE = join(STATEMACHINES_DIR, 'warranty-email/samples/valid-warranty.eml');
const def = loadWorkflow('warranty-email');
let root: string;
let dirs: ReturnType<typeof stateDirs>;
let parent: ExecutionRecord;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'stepwise-replay-'));
  dirs = stateDirs(root);
  const session = await WorkflowSession.start({
    workflow: 'warranty-email',
    historyDir: dirs.executions,
    pausesDir: dirs.pauses,
    emailsDir: dirs.emails,
    logLevel: 'SILENT',
  });
  try {
    const result = await session.deliverFile(SAMPLE);
    expect(result.steps.map((s) => s.name)).toEqual([
      '01-extract-serial',
      '02-check-warranty',
      '03a-valid-warranty',
      '05-send-confirmation',
    ]);
    parent = readLocalExecution(result.executionName!, dirs.executions);
  } finally {
    await session.close();
  }
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

const expired = {
  '02-check-warranty': {
    check_warranty: {
      serialNumber: 'SN48213',
      status: 'expired',
      product: 'Lumen X2 wireless headphones',
      warrantyEnd: '2024-01-31',
    },
  },
};

describe('replay', () => {
  it('forks from 02-check-warranty with the registry saying expired: the fork takes 03c and replies about the expired warranty', async () => {
    const { fork, from } = await replay({
      parent,
      from: '02-check-warranty',
      toolResults: expired,
      dirs,
      logLevel: 'SILENT',
    });
    expect(from).toMatchObject({ index: 1, step: '02-check-warranty' });
    expect(fork.status).toBe('SUCCEEDED');
    expect(fork.steps.map((s) => s.name)).toEqual(['01-extract-serial', '02-check-warranty', '03c-expired-warranty']);
    expect(fork.toolCalls.find((c) => c.tool === 'check_warranty')!.result).toMatchObject({ status: 'expired' });
    expect(fork.outbox).toHaveLength(1);
    expect(fork.outbox[0]!.body).toMatch(/expired|ended/i);

    const stored = readLocalExecution(fork.executionName!, dirs.executions);
    // The parent link records what the fork changed: here the registry's answer at 02-check-warranty.
    expect(stored.parent).toEqual({
      execution: parent.name,
      step: '02-check-warranty',
      index: 1,
      changes: [
        { what: 'toolResults.02-check-warranty.check_warranty', to: expired['02-check-warranty'].check_warranty },
      ],
    });
    // The fork's history starts with the parent's, up to the fork point, then runs on with ids after it.
    const kept = parent.events.findIndex(
      (e) => e.type === 'TaskStateEntered' && e.stateEnteredEventDetails?.name === '02-check-warranty',
    );
    expect(stored.events.slice(0, kept)).toEqual(
      parent.events.slice(0, kept).map((e) => ({ ...e, timestamp: e.timestamp })),
    );
    expect(stored.events.map((e) => e.id)).toEqual(stored.events.map((_, i) => i + 1));
    const diff = diffExecutions(parent, stored, def);
    expect(diff.divergesAt).toBe(1);
    expect(diff.b.path).toEqual(['01-extract-serial', '02-check-warranty', '03c-expired-warranty']);
  });

  it('runs the step with an edited step input: another serial number is looked up in the registry for real', async () => {
    const { fork } = await replay({
      parent,
      from: '02-check-warranty',
      stepInput: {
        ...(await printedState()).stepInput,
        previous: {
          ...(await printedState()).stepInput.previous,
          data: { serialNumber: 'SN20417', issueSummary: 'Does not start.' },
        },
      },
      dirs,
      logLevel: 'SILENT',
    });
    expect(fork.steps.map((s) => s.name)).toEqual(['01-extract-serial', '02-check-warranty', '03c-expired-warranty']);
    expect(fork.toolCalls.find((c) => c.tool === 'check_warranty')!.args).toEqual({ serialNumber: 'SN20417' });
  });

  it('refuses an edited step input that does not match the step input schema, and runs nothing', async () => {
    const { stepInput } = await printedState();
    await expect(
      replay({ parent, from: '02-check-warranty', stepInput: { ...stepInput, error: 'none' }, dirs }),
    ).rejects.toThrow(/does not match 02-check-warranty's input schema: error/);
  });
});

/** What `stepwise replay --print-state` prints for the parent at 02-check-warranty. */
async function printedState(): Promise<{ stepInput: Record<string, any>; toolResults: Record<string, unknown> }> {
  const { editableStepInput, forkPoint, forkPoints, recordedToolResults, stepInputFor } = await import(
    '../../../src/local/records/fork.ts'
  );
  const { synthProject } = await import('../../../src/local/cloud/synth.ts');
  const definition = (await synthProject()).stateMachines.find((m) => m.workflowName === 'warranty-email')!.definition;
  const point = forkPoint(forkPoints(parent, def), '02-check-warranty');
  return {
    stepInput: editableStepInput(
      definition,
      point.step,
      await stepInputFor(definition, point.step, point.state, { id: parent.executionArn, name: parent.name }),
    ),
    toolResults: { [point.step]: recordedToolResults(parent, def, point) },
  };
}

describe('stepwise replay', () => {
  const io = useCliCapture();
  const cli = (...args: string[]) => runCli([runCommand, replayCommand], ...args);

  it('prints the step input to edit, then forks with edited tool results and prints the fork and its diff as JSON', async () => {
    expect(await cli('run', 'warranty-email', '--email', SAMPLE, '--json')).toBe(0);
    const [run] = JSON.parse(io.out) as { executionName: string }[];
    io.out = '';
    expect(await cli('replay', run!.executionName, '--from', '02-check-warranty', '--print-state')).toBe(0);
    const printed = JSON.parse(io.out) as {
      step: string;
      stepInput: Record<string, unknown>;
      toolResults: Record<string, Record<string, Record<string, unknown>>>;
    };
    expect(printed.step).toBe('02-check-warranty');
    expect(Object.keys(printed.stepInput).sort()).toEqual(['error', 'input', 'previous']);
    printed.toolResults['02-check-warranty']!.check_warranty!.status = 'expired';
    const tools = join(root, 'tools.json');
    writeFileSync(tools, JSON.stringify(printed.toolResults));
    io.out = '';
    expect(await cli('replay', run!.executionName, '--from', '02-check-warranty', '--tools', tools, '--json')).toBe(0);
    const out = JSON.parse(io.out);
    expect(out.from).toEqual({ index: 1, step: '02-check-warranty' });
    expect(out.fork.steps.map((s: { name: string }) => s.name)).toEqual([
      '01-extract-serial',
      '02-check-warranty',
      '03c-expired-warranty',
    ]);
    expect(out.diff).toMatchObject({ divergesAt: 1, a: { name: run!.executionName } });
    expect(readStoredExecution(out.fork.executionName).parent).toMatchObject({ execution: run!.executionName });
  });

  it('forks from the --print-state output saved as it was printed, for --state and --tools alike', async () => {
    expect(await cli('run', 'warranty-email', '--email', SAMPLE, '--json')).toBe(0);
    const [run] = JSON.parse(io.out) as { executionName: string }[];
    io.out = '';
    expect(await cli('replay', run!.executionName, '--from', '02-check-warranty', '--print-state')).toBe(0);
    const printed = JSON.parse(io.out);
    printed.toolResults['02-check-warranty'].check_warranty.status = 'expired';
    const saved = join(root, 'fork.json');
    writeFileSync(saved, JSON.stringify(printed));
    io.out = '';
    expect(
      await cli(
        'replay',
        run!.executionName,
        '--from',
        '02-check-warranty',
        '--state',
        saved,
        '--tools',
        saved,
        '--json',
      ),
    ).toBe(0);
    expect(JSON.parse(io.out).fork.steps.map((s: { name: string }) => s.name)).toEqual([
      '01-extract-serial',
      '02-check-warranty',
      '03c-expired-warranty',
    ]);
  });

  it('says in one line why it cannot fork', async () => {
    expect(await cli('replay', 'no-such-execution', '--from', '02-check-warranty')).toBe(1);
    expect(io.err).toMatch(/^stepwise: .*no local execution "no-such-execution".*\n$/);
  });
});
