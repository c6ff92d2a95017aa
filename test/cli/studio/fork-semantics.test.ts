/**
 * Fork semantics, pure: for recorded executions (an email workflow, consensus waves and a counter,
 * a checkpoint paused and resumed, a deployed execution's GetExecutionHistory), the state rebuilt for every step gives
 * exactly what the step
 * received, and an edited step input turns back into the state that makes the step receive it.
 */

import type { HistoryEvent } from '@aws-sdk/client-sfn';
import { describe, expect, it } from 'vitest';
import { consensusPlanStateName } from '../../../src/cdk/names.ts';
import { loadWorkflow } from '../../../src/definitions/workflow/loader.ts';
import { synthProject } from '../../../src/local/cloud/synth.ts';
import {
  checkForkInput,
  diffExecutions,
  editableStepInput,
  emailBodyFromTranscripts,
  forkHistory,
  forkName,
  forkPoint,
  forkPoints,
  recordedToolResults,
  stateFromStepInput,
  stepInputFor,
} from '../../../src/local/records/fork.ts';
import { recordedExecution as record } from '../../support/fixtures.ts';

const app = await synthProject();
const definitionOf = (workflow: string) => app.stateMachines.find((m) => m.workflowName === workflow)!.definition;

/** What each attempt of a step's Task was invoked with: the first attempt's input, per run of the Task, in order. */
function received(events: HistoryEvent[], step: string): unknown[] {
  return events.flatMap((e, i) => {
    if (e.type !== 'TaskStateEntered' || e.stateEnteredEventDetails?.name !== step) return [];
    const scheduled = events
      .slice(i + 1)
      .find((x) => x.type === 'LambdaFunctionScheduled' || x.type === 'TaskScheduled')!;
    return [
      JSON.parse(
        scheduled.lambdaFunctionScheduledEventDetails?.input ?? scheduled.taskScheduledEventDetails!.parameters!,
      ),
    ];
  });
}

/** The state a step's own Task was entered with (for a consensus step: after its samples voted). */
const taskEntryStates = (events: HistoryEvent[], step: string) =>
  events
    .filter((e) => e.type === 'TaskStateEntered' && e.stateEnteredEventDetails?.name === step)
    .map((e) => JSON.parse(e.stateEnteredEventDetails!.input!));

const RECORDED = ['case-desk-valid', 'consensus-pick-vote', 'checkpoint-review-resumed', 'aws-case-desk'] as const;

describe.each(RECORDED)('%s', (name) => {
  const parent = record(name);
  const def = loadWorkflow(parent.workflow!);
  const definition = definitionOf(parent.workflow!);
  const points = forkPoints(parent, def);
  const execution = { id: parent.executionArn, name: parent.name };

  it('offers every step the execution ran as a fork point, in order', () => {
    const ran = parent.events.filter(
      (e) => e.type === 'TaskStateEntered' && def.steps.some((s) => s.name === e.stateEnteredEventDetails?.name),
    );
    expect(points.map((p) => p.step)).toEqual(ran.map((e) => e.stateEnteredEventDetails!.name));
    expect(points.map((p) => p.index)).toEqual(points.map((_, i) => i));
  });

  it('rebuilds, for every step N, exactly the step input step N received', async () => {
    const seen = new Map<string, number>();
    for (const point of points) {
      const n = seen.get(point.step) ?? 0;
      seen.set(point.step, n + 1);
      const state = taskEntryStates(parent.events, point.step)[n];
      const rebuilt = await stepInputFor(definition, point.step, state, execution);
      expect(rebuilt, `${point.step} #${n + 1}`).toEqual(received(parent.events, point.step)[n]);
      if (point.entryState === point.step) expect(point.state).toEqual(state);
    }
  });

  it('turns a step input back into the state that gives it: unedited, the recorded state', async () => {
    for (const point of points.filter((p) => p.entryState === p.step)) {
      const stepInput = await stepInputFor(definition, point.step, point.state, execution);
      const edited = editableStepInput(definition, point.step, stepInput);
      expect(Object.keys(edited).sort()).toEqual(expect.arrayContaining(['error', 'input', 'previous']));
      expect(stateFromStepInput(definition, point.step, edited, point.state)).toEqual(point.state);
      const changed = { ...edited, previous: { ...(edited.previous as object), data: { marker: 'edited' } } };
      const rebuilt = await stepInputFor(
        definition,
        point.step,
        stateFromStepInput(definition, point.step, changed, point.state),
        execution,
      );
      expect(rebuilt.previous).toMatchObject({ data: { marker: 'edited' } });
    }
  });

  it('keeps the parent history before the fork point', () => {
    const last = points.at(-1)!;
    const kept = forkHistory(parent, last);
    expect(kept.at(-1)!.id).toBe(parent.events[last.eventIndex - 1]!.id);
    expect(
      kept.some(
        (e) => e.stateEnteredEventDetails?.name === last.entryState && e.id === parent.events[last.eventIndex]!.id,
      ),
    ).toBe(false);
  });
});

describe('fork points of special steps', () => {
  it('a consensus step is forked at its sample plan, with the state before its waves: the fork samples again', async () => {
    const parent = record('consensus-pick-vote');
    const point = forkPoints(parent, loadWorkflow('consensus-pick')).find((p) => p.step === '02-pick')!;
    expect(point.entryState).toBe(consensusPlanStateName('02-pick'));
    const [afterVote] = taskEntryStates(parent.events, '02-pick');
    const { consensus, ...result } = afterVote.result;
    expect(consensus.votes).toBeDefined();
    expect(point.state).toEqual({ ...afterVote, result });
  });

  it('a step after a resumed checkpoint is forked with the resumer output in its data', async () => {
    const parent = record('checkpoint-review-resumed');
    const def = loadWorkflow('checkpoint-review');
    const points = forkPoints(parent, def);
    const afterPause = points.find(
      (p) => (p.state as { result: { data: Record<string, unknown> } }).result.data.checkpoint !== undefined,
    )!;
    expect(afterPause).toBeDefined();
    const received = await stepInputFor(definitionOf('checkpoint-review'), afterPause.step, afterPause.state, {
      id: parent.executionArn,
      name: parent.name,
    });
    expect((received.previous as { data: { checkpoint: unknown } }).data.checkpoint).toEqual({
      notes: 'Confirmed: the push came first.',
    });
  });

  it('names a fork point by position, step name, or n-th run, and refuses a step that did not run', () => {
    const points = forkPoints(record('checkpoint-review-resumed'), loadWorkflow('checkpoint-review'));
    expect(forkPoint(points, '02-review').index).toBe(1);
    expect(forkPoint(points, '02-review@2').index).toBe(3);
    expect(forkPoint(points, 0).step).toBe('01-plan');
    expect(() => forkPoint(points, '04-escalate')).toThrow(
      /did not run 04-escalate \(the steps that ran: 0:01-plan, 1:02-review/,
    );
  });
});

describe('an edited step input is checked against the step input schema', () => {
  const parent = record('case-desk-valid');
  const def = loadWorkflow('case-desk');
  const definition = definitionOf('case-desk');
  const point = forkPoints(parent, def).find((p) => p.step === '02-look-up')!;
  const execution = { id: parent.executionArn, name: parent.name };

  it('accepts the recorded input and an edited one, and gives the state that makes the step receive it', async () => {
    const edited = editableStepInput(
      definition,
      point.step,
      await stepInputFor(definition, point.step, point.state, execution),
    );
    (edited.previous as { data: Record<string, unknown> }).data.caseRef = 'C-10002';
    const checked = await checkForkInput(def, definition, point, edited, execution);
    expect(checked.problems).toEqual([]);
    expect((checked.state!.result as { data: Record<string, unknown> }).data.caseRef).toBe('C-10002');
  });

  it.each([
    [
      'a count that is not a number',
      (e: any) => ({ ...e, previous: { ...e.previous, count: 'two' } }),
      'previous.count',
    ],
    [
      'an unknown decidedBy',
      (e: any) => ({ ...e, previous: { ...e.previous, decidedBy: 'oracle' } }),
      'previous.decidedBy',
    ],
    ['an input that is no email input', (e: any) => ({ ...e, input: { email: { id: 'x' } } }), 'input.email'],
    ['no object at all', () => [1, 2], '(root)'],
  ])('refuses %s, naming where', async (_, edit, path) => {
    const edited = editableStepInput(
      definition,
      point.step,
      await stepInputFor(definition, point.step, point.state, execution),
    );
    const { problems } = await checkForkInput(def, definition, point, edit(edited), execution);
    expect(problems[0]!.path).toContain(path);
  });
});

describe('what a fork reuses from its parent', () => {
  const parent = record('case-desk-valid');
  const def = loadWorkflow('case-desk');

  it('pins the tool results the forked step got, by default', () => {
    const point = forkPoints(parent, def).find((p) => p.step === '02-look-up')!;
    expect(recordedToolResults(parent, def, point)).toEqual({
      lookup_case: { ref: 'C-10001', status: 'open', product: 'Desk lamp' },
    });
  });

  it('finds the email body its LLM steps were shown in their recorded model requests', () => {
    expect(emailBodyFromTranscripts(parent, def)).toContain('it flickers and then');
  });

  it('names a fork after its parent within the 80 characters of an execution name', () => {
    expect(forkName('a'.repeat(100), 'abcd1234')).toHaveLength(80);
    expect(forkName('email-1', 'abcd1234')).toBe('email-1-fork-abcd1234');
  });
});

describe('diffExecutions', () => {
  it('puts two runs side by side: where the path diverges, outputs, replies and tokens', () => {
    const a = record('case-desk-valid');
    const def = loadWorkflow('case-desk');
    const b = structuredClone(a);
    const scheduled = b.events.filter((e) => e.type === 'LambdaFunctionSucceeded');
    const second = JSON.parse(scheduled[1]!.lambdaFunctionSucceededEventDetails!.output!);
    scheduled[1]!.lambdaFunctionSucceededEventDetails!.output = JSON.stringify({
      ...second,
      next: '03b-not-found',
      fields: { record: { status: 'not_found' } },
    });
    const diff = diffExecutions(a, b, def);
    expect(diff.divergesAt).toBe(1);
    expect(diff.steps[0]!.differs).toEqual([]);
    expect(diff.steps[1]!.differs).toEqual(['next', 'fields']);
    expect(diff.a.path).toEqual(['01-read-request', '02-look-up', '03a-open-case', '05-confirm']);
    expect(diffExecutions(a, a, def).divergesAt).toBeNull();
  });
});
