/**
 * The console reads like Studio: every compiled workflow's state machine has a readable
 * `StateMachineName` (`<stack>-<workflow>`), and every state of its ASL carries a `Comment`.
 */
import { describe, expect, it } from 'vitest';
import { stepComment } from '../../src/cdk/constructs/agent-workflow.ts';
import { workflowStateMachineName } from '../../src/cdk/names.ts';
import { listWorkflows, loadWorkflow } from '../../src/definitions/workflow/loader.ts';
import { allStates } from '../../src/local/asl/interpreter.ts';
import { FIXTURE_STATEMACHINES } from '../support/fixture-project.ts';
import { localView, synthApp } from './template.ts';

// The fixture project's app: an email workflow, a consensus vote with a counter, a checkpoint, an event wait.
const app = localView(synthApp('dev'));
const workflows = listWorkflows(FIXTURE_STATEMACHINES);
// Compiled agent workflows (the lifecycle's state machine is named and commented by its own construct).
const machines = app.stateMachines.filter((m) => workflows.includes(m.workflowName!));

describe('readable state machine names', () => {
  it('names every workflow state machine <stack>-<workflow>, and the local runtime knows it by that name', () => {
    expect(machines.map((m) => m.workflowName).sort()).toEqual(workflows);
    expect(workflows.length).toBeGreaterThan(3);
    for (const m of machines) {
      expect(m.name).toBe(`${m.stack}-${m.workflowName}`);
      expect(app.templates[m.stack]!.Resources![m.logicalId]!.Properties!.StateMachineName).toBe(m.name);
    }
    expect(machines.find((m) => m.workflowName === 'case-desk')!.name).toBe('Stepwise-CaseDesk-dev-case-desk');
  });

  it('keeps a name past 80 characters within the limit, distinct from a name that shares its start', () => {
    const stack = `Stepwise-${'VeryLong'.repeat(8)}-dev`;
    const a = workflowStateMachineName(stack, 'a-workflow-with-a-long-name');
    const b = workflowStateMachineName(stack, 'a-workflow-with-a-long-name-too');
    expect(a).toHaveLength(80);
    expect(b).toHaveLength(80);
    expect(a).not.toBe(b);
    expect(a.startsWith(stack.slice(0, 60))).toBe(true);
    expect(a).toMatch(/^[A-Za-z0-9-]+$/);
    expect(workflowStateMachineName('Stepwise-Short-dev', 'x')).toBe('Stepwise-Short-dev-x');
  });
});

describe('a Comment on every state', () => {
  it.each(machines.map((m) => [m.workflowName!, m] as const))(
    '%s: every state at any depth has a Comment; a step says what it does and its kind',
    (workflow, m) => {
      const def = loadWorkflow(workflow, FIXTURE_STATEMACHINES);
      const states = [...allStates(m.definition)];
      const missing = states
        .filter(([, s]) => typeof s.Comment !== 'string' || !s.Comment.trim())
        .map(([name]) => name);
      expect(missing).toEqual([]);
      // Steps that run a function (a map or parallel step's joins its items or branches); wait, event and workflow
      // steps compile to states of their own, commented above.
      for (const step of def.steps.filter((s) => s.kind === 'llm' || s.handler || s.map || s.parallel)) {
        const task = states.find(([name]) => name === step.name)![1];
        expect(task.Comment).toBe(stepComment(step));
        expect(task.Comment).toContain(step.description);
        expect(task.Comment).toContain(
          step.kind === 'llm' ? 'LLM step' : step.handler ? 'code step' : `${step.kind} step`,
        );
      }
    },
  );

  it('says what the generated states do: the route Choice its edges, consensus waves, counters and pauses theirs', () => {
    const comment = (workflow: string, state: string) =>
      [...allStates(machines.find((m) => m.workflowName === workflow)!.definition)].find(
        ([name]) => name === state,
      )?.[1].Comment as string;
    expect(comment('case-desk', '02-look-up.route')).toMatch(
      /03a-open-case, 03b-not-found, 04-hand-off.*the fallback 04-hand-off/,
    );
    expect(comment('consensus-pick', '02-pick.wave-1')).toMatch(/^Wave 1 of 02-pick's consensus/);
    expect(comment('checkpoint-review', '03-record.pause')).toMatch(/^Checkpoint after 03-record/);
    const counter = machines
      .flatMap((m) => [...allStates(m.definition)])
      .find(([name, s]) => name.endsWith('.counters') && s.Type === 'Pass');
    expect(counter?.[1].Comment).toMatch(/^Entering .*\$\.counters/);
  });
});
