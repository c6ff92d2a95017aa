/**
 * State transitions of the compiled ASL of the fixture project's case-desk, counted by running it in the in-process
 * interpreter (aws-local-stepfunctions) with scripted step results. Standard workflows are billed per
 * transition: the contract costs 2 per step (Task + Choice) plus 2 per execution (Start + terminal).
 */
import { StateMachine } from 'aws-local-stepfunctions';
import { describe, expect, it } from 'vitest';
import { DONE } from '../../src/definitions/workflow/schema.ts';
import type { StepInput, StepOutput } from '../../src/runtime/contracts/step.ts';
import { stateMachineOf, synthApp } from './template.ts';

const { asl } = stateMachineOf(synthApp('dev').template);
const machine = new StateMachine(asl as never, { validationOptions: { checkArn: false } });
const taskNames = Object.keys(asl.States).filter((name) => asl.States[name].Type === 'Task');

/** The five flows of case-desk, as the routes each step takes. */
const FLOWS: Record<string, string[]> = {
  'open case': ['01-read-request', '02-look-up', '03a-open-case', '05-confirm'],
  'closed case': ['01-read-request', '02-look-up', '04-hand-off'],
  'unknown reference': ['01-read-request', '02-look-up', '03b-not-found'],
  'missing reference': ['01-read-request', '03c-ask-ref'],
  'out of scope': ['01-read-request', '04-hand-off'],
};

/** Run the ASL; each Task answers with the next route of `path` (and what `route` says for a step's name, if given). */
async function run(path: string[], route: Record<string, string> = {}) {
  const handler = (state: string) => (raw: unknown) => {
    const input = raw as StepInput;
    const next = route[state] ?? path[path.indexOf(state) + 1] ?? DONE;
    const output: StepOutput = {
      step: state,
      next,
      reason: `scripted ${state}`,
      decidedBy: 'code',
      fields: {},
      data: input.previous.data,
      count: input.count,
      toolCalls: [],
      usage: { modelCalls: 0, inputTokens: 0, outputTokens: 0, cacheReadInputTokens: 0, cacheWriteInputTokens: 0 },
      durationMs: 1,
    };
    return JSON.parse(JSON.stringify(output)); // what the Lambda service returns: plain JSON
  };
  const execution = machine.run(
    { email: { id: 'm-1' } },
    {
      overrides: { taskResourceLocalHandlers: Object.fromEntries(taskNames.map((t) => [t, handler(t)])) },
      context: { Execution: { Id: 'arn:aws:states:us-east-1:123456789012:execution:wf:e-1', Name: 'e-1' } },
    },
  );
  const entered: string[] = [];
  for await (const event of execution.eventLogs) {
    if (event.type === 'StateEntered') entered.push(event.state.name);
  }
  const output = await execution.result.catch((e: Error) => ({ failed: e.message }));
  return { entered, output };
}

describe('state transitions of the compiled case-desk workflow', () => {
  it.each(Object.entries(FLOWS))('%s: 2 per step + 2 per execution', async (flow, path) => {
    const { entered, output } = await run(path);
    expect(entered).toEqual(['Start', ...path.flatMap((s) => [s, `${s}.route`]), 'Done']);
    expect(entered).toHaveLength(2 * path.length + 2);
    expect(output).toMatchObject({ result: { step: path.at(-1), next: DONE, count: path.length } });
    console.log(
      `[transitions] ${flow}: ${path.length} steps x 2 (Task + Choice) + 2 (Start + Done) = ${entered.length} state transitions`,
    );
  });

  it('an undeclared route costs the fallback step on top', async () => {
    const { entered } = await run(['01-read-request'], { '01-read-request': '05-confirm', '04-hand-off': DONE });
    expect(entered).toEqual([
      'Start',
      '01-read-request',
      '01-read-request.route',
      '04-hand-off',
      '04-hand-off.route',
      'Done',
    ]);
  });
});
