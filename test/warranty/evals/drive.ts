/**
 * Runs an eval case through the real step handler with the offline model and the case's mocked
 * tools, following the routing rules of the compiled ASL (declared edge → that step, anything
 * else → the fallback, caught errors → the fallback, step-count circuit breaker). A test harness
 * only: the eval runner proper (later) drives the synthesized ASL in the local runtime.
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import { createHandler } from '../../../lambdas/handlers/step.ts';
import { DONE, type StepInput, type StepOutput, type StepState } from '../../../lambdas/lib/contracts.ts';
import type { WorkflowDefinition } from '../../../lambdas/lib/workflow/schema.ts';
import type { EvalCase } from '../../../lambdas/evals/schema.ts';
import { mockToolbox } from '../../../lambdas/evals/mock-toolbox.ts';
import { memoryEventLog } from '../../../lambdas/lib/event-log.ts';
import { captureLogger } from '../runner/fixtures.ts';

export interface DriveResult {
  steps: StepOutput[];
  /** How the execution ended: `Done`, or the Fail state it would reach. */
  end: 'Done' | 'MaxStepsExceeded' | 'FallbackFailed' | 'RouteRejected';
}

export async function driveCase(def: WorkflowDefinition, evalCase: EvalCase): Promise<DriveResult> {
  const { email: given, mock_function_responses } = evalCase.input;
  const email = {
    id: `eval-${evalCase.scenario_id}`,
    messageId: `<${evalCase.scenario_id}@eval.local>`,
    from: given.from,
    ...(given.from_name ? { fromName: given.from_name } : {}),
    to: ['warranty@example.com'],
    subject: given.subject,
    receivedAt: '2026-02-02T10:00:00.000Z',
    bodyChars: given.body.length,
  };
  const services = {
    toolbox: mockToolbox(mock_function_responses),
    emails: { get: async () => ({ email, body: given.body }) },
    events: memoryEventLog(),
    logger: captureLogger().logger as unknown as Logger,
  };
  const { manifest } = def;
  const handlers = new Map(def.steps.map((s) => [s.name, createHandler({ WORKFLOW: manifest.name, STEP: s.name, MODEL_PROVIDER: 'offline' }, services)]));
  const steps: StepOutput[] = [];
  let state: StepState = { step: null, next: manifest.entry, reason: 'start', decidedBy: null, fields: {}, data: {}, count: 0 };
  let current = manifest.entry;
  let error: StepInput['error'] = null;
  for (;;) {
    const input: StepInput = {
      workflow: manifest.name,
      step: current,
      input: { email },
      previous: state,
      error,
      count: state.count + 1,
      execution: { id: `arn:aws:states:us-east-1:000000000000:execution:${manifest.name}:${evalCase.scenario_id}`, name: evalCase.scenario_id },
    };
    let out: StepOutput;
    try {
      out = (await handlers.get(current)!(input)) as StepOutput;
    } catch (e) {
      if (current === manifest.fallback) return { steps, end: 'FallbackFailed' };
      error = { Error: (e as Error).name, Cause: JSON.stringify({ errorType: (e as Error).name, errorMessage: (e as Error).message }) };
      current = manifest.fallback;
      continue;
    }
    steps.push(out);
    error = null;
    const { step, next, reason, decidedBy, fields, data, count } = out;
    state = { step, next, reason, decidedBy, fields, data, count };
    if (count >= manifest.maxSteps && next !== DONE) return { steps, end: 'MaxStepsExceeded' };
    if (next === DONE) return { steps, end: 'Done' };
    if (def.steps.find((s) => s.name === current)!.next.includes(next)) current = next;
    else if (current === manifest.fallback) return { steps, end: 'RouteRejected' };
    else current = manifest.fallback;
  }
}
