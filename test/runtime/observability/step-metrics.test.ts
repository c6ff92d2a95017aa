/** The step handler's metrics: one EMF line per step, dimensions `workflow` and `step` only. */
import { describe, expect, it } from 'vitest';
import { ModelThrottledError } from '../../../src/core/errors.ts';
import type { InboundEmail } from '../../../src/definitions/workflow/inbound-email.ts';
import type { ContentBlock, ModelProvider } from '../../../src/runtime/contracts/model-port.ts';
import type { StepInput, StepOutput } from '../../../src/runtime/contracts/step.ts';
import { memoryEventLog } from '../../../src/runtime/event-log.ts';
import { createHandler } from '../../../src/runtime/step-handler/handler.ts';
import type { Toolbox } from '../../../src/runtime/tools/types.ts';
import { WARRANTY_TOOLS } from '../tools/fixtures.ts';

const toolSpec = (name: string) =>
  Object.hasOwn(WARRANTY_TOOLS, name) ? WARRANTY_TOOLS[name as keyof typeof WARRANTY_TOOLS] : undefined;

import { dimensionsOf, namespaceOf, unitsOf, useEmfCapture, valuesOf } from './emf.ts';

const EMAIL: InboundEmail = {
  id: 'ses-msg-7f3a9c',
  messageId: '<cafe01@mail.example.org>',
  from: 'maria.lopez@example.org',
  fromName: 'Maria Lopez',
  to: ['claims@warranty.example.com'],
  subject: 'Headphones stopped charging',
  receivedAt: '2026-02-02T10:00:00.000Z',
  bodyChars: 80,
};
const BODY = 'My Lumen X2 headphones stopped charging. Serial number SN48213. Maria';
const EXECUTION = 'email-ses-msg-7f3a9c';
/** Personal or per-request values: none may reach a metric. */
const PERSONAL = [EMAIL.id, EMAIL.from, EMAIL.fromName!, EMAIL.subject, EMAIL.messageId, EXECUTION, 'SN48213'];

// FAST_PATHS off: these count the model's usage on step 01.
const ENV = {
  FAST_PATHS: 'off',
  WORKFLOW: 'warranty-email',
  STEP: '01-extract-serial',
  POWERTOOLS_SERVICE_NAME: 'warranty-email',
  POWERTOOLS_METRICS_DISABLED: 'false',
};

function stepInput(): StepInput {
  return {
    workflow: 'warranty-email',
    step: '01-extract-serial',
    input: { email: EMAIL },
    previous: {
      step: null,
      next: '01-extract-serial',
      reason: 'start',
      decidedBy: null,
      fields: {},
      data: {},
      count: 0,
    },
    error: null,
    count: 1,
    execution: { id: `arn:aws:states:us-east-1:123456789012:execution:WarrantyEmail:${EXECUTION}`, name: EXECUTION },
  };
}

/** A model that first calls a tool the extract step may not use (refused), then routes; 100/10/80/20 tokens a turn. */
function modelRefusedThenRouting(): ModelProvider {
  const turns: ContentBlock[][] = [
    [{ toolUse: { toolUseId: 't1', name: 'send_email', input: { subject: 'Hi', body: 'We got it.' } } }],
    [
      {
        toolUse: {
          toolUseId: 't2',
          name: 'route',
          input: {
            next: '02-check-warranty',
            reason: 'Warranty claim with a serial.',
            serialNumber: 'SN48213',
            issueSummary: 'Does not charge.',
          },
        },
      },
    ],
  ];
  let turn = 0;
  return {
    name: 'bedrock',
    async converse() {
      // The handler keeps its model across invocations: every step replays the script.
      const content = turns[turn++ % turns.length]!;
      return {
        output: { message: { role: 'assistant', content } },
        stopReason: 'tool_use',
        usage: {
          inputTokens: 100,
          outputTokens: 10,
          totalTokens: 110,
          cacheReadInputTokens: 80,
          cacheWriteInputTokens: 20,
        },
      };
    },
  };
}

const unusedToolbox: Toolbox = {
  spec: toolSpec,
  execute: async (name) => {
    throw new Error(`the extract step must not run ${name}`);
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
      service: 'warranty-email',
      workflow: 'warranty-email',
      step: '01-extract-serial',
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
    const run = handler({ ...ENV, POWERTOOLS_METRICS_NAMESPACE: 'Acme/Warranty' });
    await run(stepInput());
    await run(stepInput());
    const lines = emf.lines();
    expect(lines.map(namespaceOf)).toEqual(['Acme/Warranty', 'Acme/Warranty']);
    expect(lines.map((l) => valuesOf(l).StepCompleted)).toEqual([1, 1]);
  });

  it('counts a FallbackHandoff when the fallback is reached through a caught error, and only from the fallback step', async () => {
    const fallbackEnv = { ...ENV, STEP: '04-out-of-scope' };
    const sent = {
      spec: toolSpec,
      execute: async (name: string, args: unknown) => ({
        tool: name,
        args: args as Record<string, unknown>,
        result: { sent: true },
      }),
    };
    const run = createHandler(fallbackEnv, {
      toolbox: sent,
      events: memoryEventLog(),
      emails: { get: async () => ({ email: EMAIL, body: BODY }) },
    });
    const caught = {
      ...stepInput(),
      step: '04-out-of-scope',
      previous: { ...stepInput().previous, step: '01-extract-serial', next: '02-check-warranty', count: 1 },
      error: { Error: 'ModelTimeoutError', Cause: '{"errorType":"ModelTimeoutError","errorMessage":"timed out"}' },
      count: 2,
    };
    await run(caught);
    await run({ ...caught, previous: { ...caught.previous, next: '04-out-of-scope' }, error: null });
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
    expect(dimensionsOf(lines[0]!)).toEqual({ service: 'warranty-email', workflow: 'warranty-email' });
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
