/**
 * Replay and fork through the local runtime: a recorded case-desk execution forked from
 * 02-look-up with the lookup answering `not_found` takes 03b; an edited step input changes
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

const SAMPLE = join(STATEMACHINES_DIR, 'case-desk/samples/valid.eml');
const def = loadWorkflow('case-desk');
let root: string;
let dirs: ReturnType<typeof stateDirs>;
let parent: ExecutionRecord;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'stepwise-replay-'));
  dirs = stateDirs(root);
  const session = await WorkflowSession.start({
    workflow: 'case-desk',
    historyDir: dirs.executions,
    pausesDir: dirs.pauses,
    emailsDir: dirs.emails,
    logLevel: 'SILENT',
  });
  try {
    const result = await session.deliverFile(SAMPLE);
    expect(result.steps.map((s) => s.name)).toEqual(['01-read-request', '02-look-up', '03a-open-case', '05-confirm']);
    parent = readLocalExecution(result.executionName!, dirs.executions);
  } finally {
    await session.close();
  }
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

const notFound = { '02-look-up': { lookup_case: { ref: 'C-10001', status: 'not_found' } } };
/** The path of a fork whose lookup says the case does not exist. */
const NOT_FOUND_PATH = ['01-read-request', '02-look-up', '03b-not-found'];

describe('replay', () => {
  it('forks from 02-look-up with the lookup saying not_found: the fork takes 03b and replies that the case is unknown', async () => {
    const { fork, from } = await replay({
      parent,
      from: '02-look-up',
      toolResults: notFound,
      dirs,
      logLevel: 'SILENT',
    });
    expect(from).toMatchObject({ index: 1, step: '02-look-up' });
    expect(fork.status).toBe('SUCCEEDED');
    expect(fork.steps.map((s) => s.name)).toEqual(NOT_FOUND_PATH);
    expect(fork.toolCalls.find((c) => c.tool === 'lookup_case')!.result).toMatchObject({ status: 'not_found' });
    expect(fork.outbox).toHaveLength(1);
    expect(fork.outbox[0]!.body).toMatch(/could not find case C-10001/i);

    const stored = readLocalExecution(fork.executionName!, dirs.executions);
    // The parent link records what the fork changed: here the lookup's answer at 02-look-up.
    expect(stored.parent).toEqual({
      execution: parent.name,
      step: '02-look-up',
      index: 1,
      changes: [{ what: 'toolResults.02-look-up.lookup_case', to: notFound['02-look-up'].lookup_case }],
    });
    // The fork's history starts with the parent's, up to the fork point, then runs on with ids after it.
    const kept = parent.events.findIndex(
      (e) => e.type === 'TaskStateEntered' && e.stateEnteredEventDetails?.name === '02-look-up',
    );
    expect(stored.events.slice(0, kept)).toEqual(
      parent.events.slice(0, kept).map((e) => ({ ...e, timestamp: e.timestamp })),
    );
    expect(stored.events.map((e) => e.id)).toEqual(stored.events.map((_, i) => i + 1));
    const diff = diffExecutions(parent, stored, def);
    expect(diff.divergesAt).toBe(1);
    expect(diff.b.path).toEqual(NOT_FOUND_PATH);
  });

  it('runs the step with an edited step input: another case reference is looked up in the cases for real', async () => {
    const { fork } = await replay({
      parent,
      from: '02-look-up',
      stepInput: {
        ...(await printedState()).stepInput,
        previous: {
          ...(await printedState()).stepInput.previous,
          data: { caseRef: 'C-20001', summary: 'Does not start.' },
        },
      },
      dirs,
      logLevel: 'SILENT',
    });
    // C-20001 is a closed case: a person takes over.
    expect(fork.steps.map((s) => s.name)).toEqual(['01-read-request', '02-look-up', '04-hand-off']);
    const lookup = fork.toolCalls.find((c) => c.tool === 'lookup_case')!;
    expect(lookup.args).toEqual({ caseRef: 'C-20001' });
    expect(lookup.result).toMatchObject({ status: 'closed' });
  });

  it('refuses an edited step input that does not match the step input schema, and runs nothing', async () => {
    const { stepInput } = await printedState();
    await expect(
      replay({ parent, from: '02-look-up', stepInput: { ...stepInput, error: 'none' }, dirs }),
    ).rejects.toThrow(/does not match 02-look-up's input schema: error/);
  });
});

/** What `stepwise replay --print-state` prints for the parent at 02-look-up. */
async function printedState(): Promise<{ stepInput: Record<string, any>; toolResults: Record<string, unknown> }> {
  const { editableStepInput, forkPoint, forkPoints, recordedToolResults, stepInputFor } = await import(
    '../../../src/local/records/fork.ts'
  );
  const { synthProject } = await import('../../../src/local/cloud/synth.ts');
  const definition = (await synthProject()).stateMachines.find((m) => m.workflowName === 'case-desk')!.definition;
  const point = forkPoint(forkPoints(parent, def), '02-look-up');
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
    expect(await cli('run', 'case-desk', '--email', SAMPLE, '--json')).toBe(0);
    const [run] = JSON.parse(io.out) as { executionName: string }[];
    io.out = '';
    expect(await cli('replay', run!.executionName, '--from', '02-look-up', '--print-state')).toBe(0);
    const printed = JSON.parse(io.out) as {
      step: string;
      stepInput: Record<string, unknown>;
      toolResults: Record<string, Record<string, Record<string, unknown>>>;
    };
    expect(printed.step).toBe('02-look-up');
    expect(Object.keys(printed.stepInput).sort()).toEqual(['error', 'input', 'previous']);
    printed.toolResults['02-look-up']!.lookup_case!.status = 'not_found';
    const tools = join(root, 'tools.json');
    writeFileSync(tools, JSON.stringify(printed.toolResults));
    io.out = '';
    expect(await cli('replay', run!.executionName, '--from', '02-look-up', '--tools', tools, '--json')).toBe(0);
    const out = JSON.parse(io.out);
    expect(out.from).toEqual({ index: 1, step: '02-look-up' });
    expect(out.fork.steps.map((s: { name: string }) => s.name)).toEqual(NOT_FOUND_PATH);
    expect(out.diff).toMatchObject({ divergesAt: 1, a: { name: run!.executionName } });
    expect(readStoredExecution(out.fork.executionName).parent).toMatchObject({ execution: run!.executionName });
  });

  it('forks from the --print-state output saved as it was printed, for --state and --tools alike', async () => {
    expect(await cli('run', 'case-desk', '--email', SAMPLE, '--json')).toBe(0);
    const [run] = JSON.parse(io.out) as { executionName: string }[];
    io.out = '';
    expect(await cli('replay', run!.executionName, '--from', '02-look-up', '--print-state')).toBe(0);
    const printed = JSON.parse(io.out);
    printed.toolResults['02-look-up'].lookup_case.status = 'not_found';
    const saved = join(root, 'fork.json');
    writeFileSync(saved, JSON.stringify(printed));
    io.out = '';
    expect(
      await cli('replay', run!.executionName, '--from', '02-look-up', '--state', saved, '--tools', saved, '--json'),
    ).toBe(0);
    expect(JSON.parse(io.out).fork.steps.map((s: { name: string }) => s.name)).toEqual(NOT_FOUND_PATH);
  });

  it('says in one line why it cannot fork', async () => {
    expect(await cli('replay', 'no-such-execution', '--from', '02-look-up')).toBe(1);
    expect(io.err).toMatch(/^stepwise: .*no local execution "no-such-execution".*\n$/);
  });
});
