/** Every workflow stack has its dashboard, built from the metrics the step handler emits. */
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import { describe, expect, it } from 'vitest';
import { WorkflowDashboard } from '../../src/cdk/constructs/workflow-dashboard.ts';
import { listWorkflows, loadWorkflow } from '../../src/definitions/workflow/loader.ts';
import type { WorkflowDefinition } from '../../src/definitions/workflow/schema.ts';
import { FIXTURE_WORKFLOWS } from '../fixtures/triage-plugin.ts';
import { FIXTURE_STATEMACHINES, fixtureEnv } from '../support/fixture-project.ts';
import { type Json, localView, synthApp } from './template.ts';

const app = localView(synthApp('dev'));
/** Step workflows (a `workflow.yaml`), not lifecycles. */
const workflows = listWorkflows(FIXTURE_STATEMACHINES);

/** The one dashboard among `resources` shows per-step runs, hand-offs, duration, and tokens where `workflow` calls a model. */
function expectDashboard(resources: Json[], workflow: WorkflowDefinition) {
  const { name } = workflow.manifest;
  const dashboards = resources.filter((r) => r.Type === 'AWS::CloudWatch::Dashboard');
  expect(dashboards).toHaveLength(1);
  const body = JSON.stringify(dashboards[0]!.Properties?.DashboardBody);
  expect(dashboards[0]!.Properties?.DashboardName).toBe(`stepwise-${name}-dev`);
  for (const metric of ['StepCompleted', 'StepDurationMs', 'FallbackHandoff', 'ToolCallRefused'])
    expect(body, metric).toContain(metric);
  // A workflow of code steps only has no model widgets, rather than empty ones.
  const callsModel = workflow.steps.some((s) => s.kind === 'llm');
  for (const metric of ['ModelCalls', 'ModelInputTokens', 'ModelCacheReadTokens', 'ModelCacheWriteTokens'])
    expect(body.includes(metric), metric).toBe(callsModel);
  expect(body.includes('per step\\"'), 'model widget titles').toBe(callsModel);
  // The handler's dimensions, so the widgets show what it emits.
  expect(body).toContain(`\\"workflow\\",\\"${name}\\"`);
}

describe('workflow dashboards', () => {
  it.each(
    app.stateMachines
      .filter((m) => m.workflowName && workflows.includes(m.workflowName))
      .map((m) => [m.workflowName!, m.stack] as const),
  )(
    '%s: one dashboard with per-step runs, hand-offs, duration, and tokens where it calls a model',
    (workflow, stack) => {
      expectDashboard(
        Object.values(app.templates[stack]!.Resources ?? {}),
        loadWorkflow(workflow, FIXTURE_STATEMACHINES),
      );
    },
  );

  it('has no model widgets for a workflow of code steps only', () => {
    const workflow = loadWorkflow('reminder', FIXTURE_WORKFLOWS);
    expect(workflow.steps.some((s) => s.kind === 'llm')).toBe(false);
    const stack = new Stack(new App(), 'Dashboards');
    const stateMachine = sfn.StateMachine.fromStateMachineName(stack, 'Machine', 'reminder');
    new WorkflowDashboard(stack, 'Dashboard', { workflow, config: fixtureEnv('dev'), stateMachine });
    expectDashboard(Object.values(Template.fromStack(stack).toJSON().Resources), workflow);
  });
});
