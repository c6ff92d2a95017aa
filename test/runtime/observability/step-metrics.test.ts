/** The step handler's metrics: one EMF line per step, dimensions `workflow` and `step` only. */
import { describe, expect, it } from 'vitest';
import { ModelThrottledError } from '../../../src/core/errors.ts';
import type { ModelProvider } from '../../../src/runtime/contracts/model-port.ts';
import type { StepOutput } from '../../../src/runtime/contracts/step.ts';
import { memoryEventLog } from '../../../src/runtime/event-log.ts';
import { createHandler } from '../../../src/runtime/step-handler/handler.ts';
import type { Toolbox } from '../../../src/runtime/tools/types.ts';
import { stepInput as builtInput, fakeToolbox, inboundEmail, scriptedModel, toolUse } from '../steps/fixtures.ts';
import { dimensionsOf, namespaceOf, unitsOf, useEmfCapture, valuesOf } from './emf.ts';

const EMAIL = inboundEmail({ id: 'ses-msg-7f3a9c', messageId: '<cafe01@mail.example.org>' });
const BODY = 'My desk lamp of case C-10001 is broken again. Nora';
const EXECUTION = 'email-ses-msg-7f3a9c';
/** Personal or per-request values: none may reach a metric. */
const PERSONAL = [EMAIL.id, EMAIL.from, EMAIL.fromName!, EMAIL.subject, EMAIL.messageId, EXECUTION, 'C-10001'];

// FAST_PATHS off: these count the model's usage on step 01.
const ENV = {
  FAST_PATHS: 'off',
  WORKFLOW: 'case-desk',
  STEP: '01-read-request',
  POWERTOOLS_SERVICE_NAME: 'case-desk',
  POWERTOOLS_METRICS_DISABLED: 'false',
};

const stepInput = () =>
  builtInput('01-read-request', {
    input: { email: EMAIL },
    execution: { id: `arn:aws:states:us-east-1:123456789012:execution:CaseDesk:${EXECUTION}`, name: EXECUTION },
  });

/**
 * A model that first calls a tool the intake step may not use (refused), then routes; 100/10/80/20 tokens a turn. The
 * handler keeps its model across invocations: the script plays twice, for two steps.
 */
function modelRefusedThenRouting(): ModelProvider {
  const refused = [toolUse('send_email', { subject: 'Hi', body: 'We got it.' }, 't1')];
  const routed = [
    toolUse(
      'route',
      {
        next: '02-look-up',
        reason: 'An issue with a case reference.',
        caseRef: 'C-10001',
        summary: 'It switches off.',
      },
      't2',
    ),
  ];
  return scriptedModel([refused, routed, refused, routed]).model;
}

const unusedToolbox: Toolbox = {
  spec: fakeToolbox().toolbox.spec,
  execute: async (name) => {
    throw new Error(`the intake step must not run ${name}`);
  },
};

function handler(env: Record<string, string> = ENV) {
  let tick = 0;
  return createHandler(env, {
    model: modelRefusedThenRouting(),
    toolbox: unusedToolbox,
    events: memoryEventLog(),
    emails: { get: async () => ({ email: EMAIL, body: BODY }) },
    clock: () => new Date(Date.UTC(2026, 1, 2, 10, 0, 0, tick++ * 250)),
  });
}

const emf = useEmfCapture();

describe('step handler metrics', () => {
  it('emits one EMF line per step: completion, duration, token usage and refused tool calls', async () => {
    const out = (await handler()(stepInput())) as StepOutput;
    expect(out.toolCalls.map((c) => [c.tool, c.error !== undefined])).toEqual([['send_email', true]]);

    const lines = emf.lines();
    expect(lines).toHaveLength(1);
    const [line] = lines;
    expect(namespaceOf(line!)).toBe('Stepwise');
    expect(line!._aws.CloudWatchMetrics[0]!.Dimensions).toEqual([['service', 'workflow', 'step']]);
    expect(dimensionsOf(line!)).toEqual({
      service: 'case-desk',
      workflow: 'case-desk',
      step: '01-read-request',
    });
    expect(valuesOf(line!)).toEqual({
      StepCompleted: 1,
      StepDurationMs: 250,
      ModelCalls: 2,
      ModelInputTokens: 200,
      ModelOutputTokens: 20,
      ModelCacheReadTokens: 160,
      ModelCacheWriteTokens: 40,
      ToolCallRefused: 1,
    });
    expect(unitsOf(line!)).toMatchObject({
      StepCompleted: 'Count',
      StepDurationMs: 'Milliseconds',
      ModelCalls: 'Count',
      ModelInputTokens: 'Count',
      ToolCallRefused: 'Count',
    });
  });

  it('puts no personal or per-execution value in the metrics', async () => {
    await handler()(stepInput());
    const text = JSON.stringify(emf.lines());
    for (const value of PERSONAL) expect(text).not.toContain(value);
  });

  it('takes the namespace from POWERTOOLS_METRICS_NAMESPACE, and flushes per invocation (nothing carries over)', async () => {
    const run = handler({ ...ENV, POWERTOOLS_METRICS_NAMESPACE: 'Acme/Desk' });
    await run(stepInput());
    await run(stepInput());
    const lines = emf.lines();
    expect(lines.map(namespaceOf)).toEqual(['Acme/Desk', 'Acme/Desk']);
    expect(lines.map((l) => valuesOf(l).StepCompleted)).toEqual([1, 1]);
  });

  it('counts a FallbackHandoff when the fallback is reached through a caught error, and only from the fallback step', async () => {
    const fallbackEnv = { ...ENV, STEP: '04-hand-off' };
    const run = createHandler(fallbackEnv, {
      toolbox: fakeToolbox({ send_email: { sent: true } }).toolbox,
      events: memoryEventLog(),
      emails: { get: async () => ({ email: EMAIL, body: BODY }) },
    });
    const caught = {
      ...stepInput(),
      step: '04-hand-off',
      previous: { ...stepInput().previous, step: '01-read-request', next: '02-look-up', count: 1 },
      error: { Error: 'ModelTimeoutError', Cause: '{"errorType":"ModelTimeoutError","errorMessage":"timed out"}' },
      count: 2,
    };
    await run(caught);
    await run({ ...caught, previous: { ...caught.previous, next: '04-hand-off' }, error: null });
    await handler()(stepInput());
    expect(emf.lines().map((l) => valuesOf(l).FallbackHandoff)).toEqual([1, 0, undefined]);
  });

  it('counts a throttled model call in ModelThrottled (dimension workflow), on its own line, though the step fails', async () => {
    const throttled: ModelProvider = {
      name: 'bedrock',
      converse: async () => {
        throw new ModelThrottledError('Too many requests, please wait before trying again.');
      },
    };
    const run = createHandler(ENV, {
      model: throttled,
      toolbox: unusedToolbox,
      events: memoryEventLog(),
      emails: { get: async () => ({ email: EMAIL, body: BODY }) },
    });
    await expect(run(stepInput())).rejects.toThrow(ModelThrottledError);
    const lines = emf.lines();
    expect(lines).toHaveLength(1);
    expect(dimensionsOf(lines[0]!)).toEqual({ service: 'case-desk', workflow: 'case-desk' });
    expect(valuesOf(lines[0]!)).toEqual({ ModelThrottled: 1 });
  });

  it('emits nothing for a step that failed, and nothing at all off Lambda by default', async () => {
    await expect(handler()({ ...stepInput(), step: 'no-such-step' })).rejects.toThrow();
    const { POWERTOOLS_METRICS_DISABLED: _, ...local } = ENV;
    await handler(local)(stepInput());
    expect(emf.lines()).toEqual([]);
    expect(emf.other()).toEqual([]);
  });
});
