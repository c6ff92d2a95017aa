/**
 * The tool loop's rules, proven on the synthesized ASL in the local runtime (DynamoDB Local, the real
 * step handlers and tools, the offline stand-in behind a recording model): the loop stops at 6
 * iterations per group in the named `IterationLimit` outcome and a new query starts again at
 * iteration 1 in a new group; `originalQuery` never changes; `groupToolResults` holds only the
 * current group's events; session notes persist in DynamoDB per session; consensus early-exits (model calls counted)
 * and breaks ties towards the
 * coldest sample; a tool name no sample may choose is discarded, never executed.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { loadWorkflow } from '../../../src/definitions/workflow/loader.ts';
import { stepTrail } from '../../../src/local/records/history.ts';
import { type RunResult, WorkflowSession } from '../../../src/local/sessions/workflow-session.ts';
import type { ConverseRequest, ModelProvider } from '../../../src/runtime/contracts/model-port.ts';
import { readStepContext } from '../../../src/runtime/contracts/prompt.ts';
import type { StepInput, StepOutput } from '../../../src/runtime/contracts/step.ts';
import { OfflineModel } from '../../../src/runtime/models/offline.ts';

type Call = { step: string; temperature: number; execution: string };
/** Per consensus sample of 02-select-tool: the tool it picks at a temperature (undefined: the offline rules decide). */
type Picker = (temperature: number) => string | undefined;

const calls: Call[] = [];
let picker: Picker = () => undefined;

/**
 * The offline rules, recorded per call; `picker` overrides 02-select-tool's choice to script what a sampled model
 * invents.
 */
function recordingModel(): ModelProvider {
  const offline = OfflineModel.forWorkflow(loadWorkflow('tool-loop'));
  return {
    name: 'offline',
    async converse(request: ConverseRequest) {
      const context = readStepContext(request)!;
      const temperature = request.inferenceConfig?.temperature ?? 0;
      calls.push({ step: context.step, temperature, execution: String((context.data as { turnId?: unknown }).turnId) });
      const tool = context.step === '02-select-tool' ? picker(temperature) : undefined;
      if (tool === undefined) return offline.converse(request);
      const input = {
        next: '03-execute',
        reason: `scripted ${tool}`,
        selectedTool: tool,
        toolArgs: { expression: '6 * 7' },
      };
      return {
        output: { message: { role: 'assistant', content: [{ toolUse: { toolUseId: 't1', name: 'route', input } }] } },
        stopReason: 'tool_use',
        usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 },
      };
    },
  };
}

const CAP_QUERY = 'Keep checking the time in Asia/Tokyo until it is midnight';
let session: WorkflowSession;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tool-loop-'));
  session = await WorkflowSession.start({
    workflow: 'tool-loop',
    historyDir: false,
    logLevel: 'SILENT',
    services: { model: recordingModel() },
  });
});
afterAll(() => session?.close());
beforeEach(() => {
  calls.length = 0;
  picker = () => undefined;
});

/** Run JSON Lines inputs in order, in the one session (a session's turns). */
async function turns(...inputs: Record<string, unknown>[]): Promise<RunResult[]> {
  const file = join(dir, `turns-${Math.random().toString(36).slice(2)}.jsonl`);
  writeFileSync(file, inputs.map((i) => JSON.stringify(i)).join('\n'));
  return session.runFiles([file]);
}

/** Each step Task's input and output in the execution (consensus samples and tallies excluded). */
function stepIo(result: RunResult): { name: string; input: StepInput; output: StepOutput }[] {
  const execution = session.execution(result.executionName!)!;
  return stepTrail(execution.history).flatMap((s) =>
    s.name.includes('.') ? [] : [{ name: s.name, input: s.input as StepInput, output: s.output as StepOutput }],
  );
}
const statesEntered = (result: RunResult, name: string) =>
  session
    .execution(result.executionName!)!
    .history.filter((e) => e.type?.endsWith('StateEntered') && e.stateEnteredEventDetails?.name === name).length;

describe('iteration groups', () => {
  it('stops a group at 6 iterations in IterationLimit with the partial summary; the next query starts a new group at iteration 1', async () => {
    const [capped, next] = await turns(
      { sessionId: 's1', turnId: 't1', query: CAP_QUERY },
      {
        sessionId: 's1',
        turnId: 't2',
        query: 'Convert 10 km to mi',
        previousResponse: { groupId: 's1/t1', branch: 'limit' },
      },
    );

    expect(capped).toMatchObject({ status: 'SUCCEEDED', outcome: 'IterationLimit' });
    expect(capped!.steps.filter((s) => s.name === '03-execute')).toHaveLength(6);
    // The cap hands the partial work to 05-respond (counter `then`): the user gets it as the response.
    expect(capped!.steps.at(-2)!.name).toBe('04-reflect');
    expect(capped!.steps.at(-1)).toMatchObject({
      name: '05-respond',
      fields: {
        branch: 'limit',
        response: expect.stringMatching(/^I stopped after 6 tool runs without finishing\. What I found so far: /),
      },
    });
    // The check ran before each of the 7 selections; the 7th ended the group instead of sampling.
    expect(statesEntered(capped!, '02-select-tool.iteration')).toBe(7);
    expect(statesEntered(capped!, '02-select-tool.counters')).toBe(6);
    expect(statesEntered(capped!, 'MaxStepsExceeded')).toBe(0);
    const output = capped!.output as {
      counters: { iteration: number };
      result: { data: { groupSummary: string; groupToolResults: { iteration: number }[] } };
    };
    expect(output.counters.iteration).toBe(6);
    expect(output.result.data.groupToolResults.map((e) => e.iteration)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(output.result.data.groupSummary.split('; ')).toHaveLength(6);

    expect(next).toMatchObject({ status: 'SUCCEEDED' });
    expect(next!.outcome).toBeUndefined();
    const io = stepIo(next!);
    expect(io.find((s) => s.name === '02-select-tool')!.input.counters).toEqual({ iteration: 1 });
    const events = io.find((s) => s.name === '03-execute')!.output.fields.groupToolResults as {
      groupId: string;
      iteration: number;
      toolName: string;
    }[];
    expect(events).toEqual([expect.objectContaining({ groupId: 's1/t2', iteration: 1, toolName: 'convert_units' })]);
  });

  it("never changes originalQuery while reflect rewrites remainingQuery, and keeps only this group's tool results", async () => {
    const query = 'Convert 5 kg to lb and what is 12 * 7';
    const [first, second] = await turns(
      { sessionId: 's2', turnId: 't1', query: 'What is 2 ^ 10' },
      { sessionId: 's2', turnId: 't2', query },
    );
    expect(first!.status).toBe('SUCCEEDED');
    const io = stepIo(second!);
    expect(io.map((s) => s.name)).toEqual([
      '01-start-group',
      '02-select-tool',
      '03-execute',
      '04-reflect',
      '02-select-tool',
      '03-execute',
      '04-reflect',
      '05-respond',
    ]);
    for (const { output } of io) expect(output.data.originalQuery).toBe(query);
    expect(io.map((s) => s.output.data.remainingQuery)).toContain('what is 12 * 7');
    const final = io.at(-1)!.output.data.groupToolResults as { groupId: string; toolName: string }[];
    expect(final.map((e) => [e.groupId, e.toolName])).toEqual([
      ['s2/t2', 'convert_units'],
      ['s2/t2', 'calculate'],
    ]);
    expect(io.at(-1)!.output.fields).toMatchObject({ response: '5 kg = 11.0231 lb; 12 * 7 = 84', branch: 'done' });
  });
});

describe('session notes (NotesTable in DynamoDB Local)', () => {
  it('keeps a note for the next turns of the same session, and never shows it to another session', async () => {
    const [saved, read, other] = await turns(
      { sessionId: 'notes-a', turnId: 't1', query: 'Remember that my locker code is 4512' },
      {
        sessionId: 'notes-a',
        turnId: 't2',
        query: 'What is my locker code?',
        previousResponse: { groupId: 'notes-a/t1', branch: 'done' },
      },
      { sessionId: 'notes-b', turnId: 't1', query: 'What is my locker code?' },
    );
    const noteCalls = (r: RunResult) => r.toolCalls.filter((c) => c.tool !== 'turn_memory');
    expect(noteCalls(saved!).map((c) => [c.tool, c.args])).toEqual([
      ['save_note', { key: 'locker code', value: '4512' }],
    ]);
    expect(read!.steps.at(-1)!.fields).toMatchObject({ response: 'locker code: 4512', branch: 'done' });
    expect(noteCalls(other!)[0]!.result).toMatchObject({ found: false });
  });
});

describe('the session keeps the previous response (turn_memory)', () => {
  it("hands each turn the previous one's output without the caller passing it: an answer to a question is read with it", async () => {
    const [asked, answered] = await turns(
      { sessionId: 'mem-1', turnId: 't1', query: 'Convert it please' },
      { sessionId: 'mem-1', turnId: 't2', query: '10 km to mi' },
    );
    expect(asked!.steps.at(-1)!.fields).toMatchObject({
      branch: 'ask',
      stateSummary: expect.stringContaining('group mem-1/t1'),
    });
    const start = stepIo(answered!)[0]!;
    expect(start.output.toolCalls).toEqual([
      expect.objectContaining({
        tool: 'turn_memory',
        args: { op: 'read' },
        result: expect.objectContaining({ found: true }),
      }),
    ]);
    expect(start.output.fields.originalQuery).toBe('Convert it please (clarified: 10 km to mi)');
    const memory = await turns({ sessionId: 'mem-2', turnId: 't1', query: 'Convert it please' });
    expect(stepIo(memory[0]!)[0]!.output.fields.originalQuery).toBe('Convert it please');
  });
});

describe('consensus', () => {
  it('stops after the first wave when it is unanimous: 4 model calls at 0-0.3, the second Map never runs', async () => {
    const [result] = await turns({ turnId: 'unanimous', query: 'Convert 10 km to mi' });
    const selects = calls.filter((c) => c.step === '02-select-tool');
    expect(selects.map((c) => c.temperature).sort()).toEqual([0, 0.1, 0.2, 0.3]);
    expect(result!.steps.find((s) => s.name === '02-select-tool')!.usage!.modelCalls).toBe(4);
    expect(statesEntered(result!, '02-select-tool.wave-2')).toBe(0);
    const vote = stepIo(result!).find((s) => s.name === '02-select-tool')!.output;
    expect(vote.consensus).toEqual({
      samples: 4,
      discarded: [],
      votes: [{ next: '03-execute', value: 'convert_units', count: 4 }],
      earlyExit: true,
    });
    // The vote's workspace lived in the step's result, which the step's own output replaced.
    expect(JSON.stringify(result!.output)).not.toContain('"votes"');
  });

  it("takes all 7 samples on a split vote and breaks the 3-3 tie towards the coldest sample's tool, the invented one discarded", async () => {
    const [result] = await turns({ turnId: 'tie', query: 'Roughly 5 mi to km, or what is 5 * 1.609' });
    expect(
      calls
        .filter((c) => c.step === '02-select-tool')
        .map((c) => c.temperature)
        .sort(),
    ).toEqual([0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6]);
    const vote = stepIo(result!).find((s) => s.name === '02-select-tool')!.output;
    expect(vote.consensus).toMatchObject({
      samples: 7,
      earlyExit: false,
      discarded: [
        {
          sample: 7,
          why: 'selectedTool "estimate_anything" is not one of calculate, convert_units, current_time, save_note, lookup_note',
        },
      ],
      votes: [
        { value: 'convert_units', count: 3 },
        { value: 'calculate', count: 3 },
      ],
    });
    expect(result!.toolCalls.map((c) => c.tool)).toEqual(['convert_units']);
  });

  it('never executes an invented tool: a majority of invented samples is discarded and the allowed minority wins', async () => {
    picker = (t) => (t < 0.2 ? 'calculate' : 'web_search');
    const [result] = await turns({ turnId: 'invented-majority', query: 'Convert 10 km to mi' });
    expect(result!.toolCalls.map((c) => [c.tool, c.args])).toEqual([['calculate', { expression: '6 * 7' }]]);
    expect(stepIo(result!).find((s) => s.name === '02-select-tool')!.output.consensus!.discarded).toHaveLength(5);
  });

  it('hands over to the fallback when every sample invents a tool: nothing is executed', async () => {
    picker = () => 'web_search';
    const [result] = await turns({ turnId: 'all-invented', query: 'Convert 10 km to mi' });
    expect(result!.status).toBe('SUCCEEDED');
    expect(result!.toolCalls).toEqual([]);
    expect(result!.steps.map((s) => s.name)).toEqual(['01-start-group', '02-select-tool', '05-respond']);
    expect(result!.steps.at(-1)!.fields).toMatchObject({ branch: 'failed' });
    expect(result!.steps[1]!.error).toMatch(/^InvalidModelOutputError: 02-select-tool: no valid sample among 7/);
  });
});
