/** Every workflow stack has its dashboard, built from the metrics the step handler emits. */

import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { STATEMACHINES_DIR } from '../../src/core/paths.ts';
import { loadWorkflow } from '../../src/definitions/workflow/loader.ts';
import { synthProject } from '../../src/local/cloud/synth.ts';

const app = await synthProject('dev');
/** Step workflows (a `workflow.yaml`), not lifecycles. */
const workflows = new Set(
  readdirSync(STATEMACHINES_DIR).filter((d) => existsSync(join(STATEMACHINES_DIR, d, 'workflow.yaml'))),
);

describe('workflow dashboards', () => {
  it.each(
    app.stateMachines
      .filter((m) => m.workflowName && workflows.has(m.workflowName))
      .map((m) => [m.workflowName!, m.stack] as const),
  )(
    '%s: one dashboard with per-step runs, hand-offs, duration, and tokens where it calls a model',
    (workflow, stack) => {
      const resources = Object.values(app.templates[stack]!.Resources ?? {});
      const dashboards = resources.filter((r) => r.Type === 'AWS::CloudWatch::Dashboard');
      expect(dashboards).toHaveLength(1);
      const body = JSON.stringify(dashboards[0]!.Properties?.DashboardBody);
      expect(dashboards[0]!.Properties?.DashboardName).toBe(`stepwise-${workflow}-dev`);
      for (const metric of ['StepCompleted', 'StepDurationMs', 'FallbackHandoff', 'ToolCallRefused'])
        expect(body, metric).toContain(metric);
      // A workflow of code steps only has no model widgets, rather than empty ones.
      const callsModel = loadWorkflow(workflow).steps.some((s) => s.kind === 'llm');
      for (const metric of ['ModelCalls', 'ModelInputTokens', 'ModelCacheReadTokens', 'ModelCacheWriteTokens'])
        expect(body.includes(metric), metric).toBe(callsModel);
      expect(body.includes('per step\\"'), 'model widget titles').toBe(callsModel);
      // The handler's dimensions, so the widgets show what it emits.
      expect(body).toContain(`\\"workflow\\",\\"${workflow}\\"`);
    },
  );
});
