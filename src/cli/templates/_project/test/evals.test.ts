// Every workflow's eval cases (statemachines/<workflow>/evals/) through the local runtime: the
// synthesized state machine, the real step handlers, the offline stand-in for the model.

import { evalWorkflow, listWorkflows } from 'stepwise/testing';
import { describe, expect, it } from 'vitest';

const workflows = listWorkflows();
// A project with lifecycles only has no evals yet: `stepwise init <name>` adds a workflow with its own.
if (workflows.length === 0) it('has no workflow yet', () => expect(workflows).toEqual([]));

describe.each(workflows)('workflow %s', (workflow) => {
  it('passes its eval cases', async () => {
    const report = await evalWorkflow(workflow);
    expect(report.cases.filter((c) => !c.passed).map((c) => `${c.id}: ${c.failures[0]?.why}`)).toEqual([]);
    expect(report.total).toBeGreaterThan(0);
  });
});
